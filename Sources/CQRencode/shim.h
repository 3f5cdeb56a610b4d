// libqrencode (Debian libqrencode-dev): the QR codes of the CA page URL (`proxyapp qr`, TUI `Q`).
#include <qrencode.h>
