// zlib (Debian zlib1g-dev): gzip and deflate bodies.
#include <zlib.h>
