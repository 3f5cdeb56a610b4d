// xxHash (Debian libxxhash-dev): XXH3-128, the names of captured body files.
#include <xxhash.h>
