// The C face of RE2: see include/CRE2Shim.h.
#include "CRE2Shim.h"

#include <re2/re2.h>

#include <new>
#include <vector>

struct proxyapp_re2 {
    re2::RE2 regex;

    proxyapp_re2(const re2::StringPiece &pattern, const re2::RE2::Options &options) : regex(pattern, options) {}
};

extern "C" {

proxyapp_re2 *proxyapp_re2_new(const char *pattern, size_t length, int options, int64_t max_memory) {
    re2::RE2::Options settings;
    settings.set_encoding(re2::RE2::Options::EncodingUTF8);
    settings.set_log_errors(false);  // errors come back as codes; the TUI owns the terminal
    settings.set_max_mem(max_memory);
    settings.set_case_sensitive((options & PROXYAPP_RE2_CASE_INSENSITIVE) == 0);
    settings.set_dot_nl((options & PROXYAPP_RE2_DOT_NL) != 0);
    settings.set_literal((options & PROXYAPP_RE2_LITERAL) != 0);
    return new (std::nothrow) proxyapp_re2(re2::StringPiece(pattern, length), settings);
}

void proxyapp_re2_free(proxyapp_re2 *re) { delete re; }

int proxyapp_re2_error_code(const proxyapp_re2 *re) { return static_cast<int>(re->regex.error_code()); }

const char *proxyapp_re2_error_fragment(const proxyapp_re2 *re, size_t *length) {
    const std::string &fragment = re->regex.error_arg();
    *length = fragment.size();
    return fragment.data();
}

int proxyapp_re2_group_count(const proxyapp_re2 *re) {
    return re->regex.ok() ? re->regex.NumberOfCapturingGroups() : 0;
}

int proxyapp_re2_program_size(const proxyapp_re2 *re) { return re->regex.ok() ? re->regex.ProgramSize() : -1; }

int proxyapp_re2_search(const proxyapp_re2 *re, const char *text, size_t length, size_t start,
                        proxyapp_re2_span *spans, int span_count) {
    if (!re->regex.ok() || start > length || span_count < 0) return 0;
    // An empty text may come with a NULL pointer; RE2 takes that as the empty string.
    re2::StringPiece subject(length == 0 ? "" : text, length);
    if (span_count == 0) {
        return re->regex.Match(subject, start, length, re2::RE2::UNANCHORED, nullptr, 0) ? 1 : 0;
    }
    // A few groups on the stack; more (rare) on the heap.
    re2::StringPiece small[8];
    std::vector<re2::StringPiece> large;
    re2::StringPiece *pieces = small;
    if (span_count > 8) {
        large.resize(static_cast<size_t>(span_count));
        pieces = large.data();
    }
    if (!re->regex.Match(subject, start, length, re2::RE2::UNANCHORED, pieces, span_count)) return 0;
    for (int i = 0; i < span_count; i++) {
        if (pieces[i].data() == nullptr) {
            spans[i].start = -1;
            spans[i].end = -1;
        } else {
            spans[i].start = static_cast<int64_t>(pieces[i].data() - subject.data());
            spans[i].end = spans[i].start + static_cast<int64_t>(pieces[i].size());
        }
    }
    return 1;
}

}  // extern "C"
