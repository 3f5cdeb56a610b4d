// Brotli (Debian libbrotli-dev): the decoder for br bodies; the encoder for tests and, later,
// re-encoding mapped bodies.
#include <brotli/decode.h>
#include <brotli/encode.h>
