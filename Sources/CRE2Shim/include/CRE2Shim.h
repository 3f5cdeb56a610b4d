// A C face for RE2 (Debian's libre2-dev), so Swift calls plain C and never C++.
//
// RE2 matches in time linear in the input (no backtracking); see Sources/LinearRegex, the only
// caller, for why ProxyApp needs that. Every function is safe to call from several threads on
// one compiled object at once (RE2's const methods are); creating and freeing are not.
#ifndef PROXYAPP_CRE2SHIM_H
#define PROXYAPP_CRE2SHIM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// A compiled RE2 (opaque).
typedef struct proxyapp_re2 proxyapp_re2;

/// Compile options, or'ed together.
enum {
    PROXYAPP_RE2_CASE_INSENSITIVE = 1,
    /// `.` matches `\n` too.
    PROXYAPP_RE2_DOT_NL = 2,
    /// The pattern is literal text, not a regex.
    PROXYAPP_RE2_LITERAL = 4,
};

/// Why a pattern did not compile: RE2's `ErrorCode` values, unchanged (0: compiled).
enum {
    PROXYAPP_RE2_OK = 0,
    PROXYAPP_RE2_ERROR_INTERNAL = 1,
    PROXYAPP_RE2_ERROR_BAD_ESCAPE = 2,
    PROXYAPP_RE2_ERROR_BAD_CHAR_CLASS = 3,
    PROXYAPP_RE2_ERROR_BAD_CHAR_RANGE = 4,
    PROXYAPP_RE2_ERROR_MISSING_BRACKET = 5,
    PROXYAPP_RE2_ERROR_MISSING_PAREN = 6,
    PROXYAPP_RE2_ERROR_UNEXPECTED_PAREN = 7,
    PROXYAPP_RE2_ERROR_TRAILING_BACKSLASH = 8,
    PROXYAPP_RE2_ERROR_REPEAT_ARGUMENT = 9,
    PROXYAPP_RE2_ERROR_REPEAT_SIZE = 10,
    PROXYAPP_RE2_ERROR_REPEAT_OP = 11,
    PROXYAPP_RE2_ERROR_BAD_PERL_OP = 12,
    PROXYAPP_RE2_ERROR_BAD_UTF8 = 13,
    PROXYAPP_RE2_ERROR_BAD_NAMED_CAPTURE = 14,
    PROXYAPP_RE2_ERROR_PATTERN_TOO_LARGE = 15,
};

/// One submatch as byte offsets into the searched text; both -1 when the group took no part.
typedef struct {
    int64_t start;
    int64_t end;
} proxyapp_re2_span;

/// Compiles `length` bytes of UTF-8 at `pattern` (NUL bytes allowed) with `options`, using at
/// most `max_memory` bytes for the program and its matching caches. Never NULL (unless out of
/// memory): check `proxyapp_re2_error_code`, then free it with `proxyapp_re2_free` either way.
/// RE2 never writes to stderr from an object made here.
proxyapp_re2 *proxyapp_re2_new(const char *pattern, size_t length, int options, int64_t max_memory);

void proxyapp_re2_free(proxyapp_re2 *re);

/// 0 when the pattern compiled, else one of the PROXYAPP_RE2_ERROR_ codes.
int proxyapp_re2_error_code(const proxyapp_re2 *re);

/// The part of the pattern RE2 blamed (e.g. `(?=` or `\1`), not NUL-terminated; `*length` is
/// set. Valid until the object is freed.
const char *proxyapp_re2_error_fragment(const proxyapp_re2 *re, size_t *length);

/// The number of capturing groups (0 for a pattern that did not compile).
int proxyapp_re2_group_count(const proxyapp_re2 *re);

/// The size of the compiled program (RE2's measure of a pattern's cost), -1 when not compiled.
int proxyapp_re2_program_size(const proxyapp_re2 *re);

/// Searches `text[start..<length]` (the whole text is the context: `^` and `\b` look before
/// `start`) for the leftmost match. Returns 1 and fills `spans[0 ..< span_count]` (the whole
/// match, then groups 1, 2, …) when one is found, 0 otherwise. `span_count` 0 asks only
/// whether there is a match (fastest).
int proxyapp_re2_search(const proxyapp_re2 *re, const char *text, size_t length, size_t start,
                        proxyapp_re2_span *spans, int span_count);

#ifdef __cplusplus
}
#endif

#endif
