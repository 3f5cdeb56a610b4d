// Zstandard (Debian libzstd-dev): zstd bodies.
#include <zstd.h>
