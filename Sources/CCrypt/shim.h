// libxcrypt (Debian libcrypt-dev): crypt_r checks the bcrypt hashes of an --auth-file (htpasswd -B).
#include <crypt.h>
