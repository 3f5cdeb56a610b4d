// c-ares (Debian libc-ares-dev): the asynchronous DNS resolver behind SystemHostResolver.
#include <ares.h>
