/// What ProxyApp's own HAR export says about a body in the entry's `comment`, read back so an
/// export → import round trip keeps it.
///
/// The writer joins one-line remarks with `; `: `response body truncated: 3 of 10 bytes
/// captured` (the capture held a prefix) and `response body: <why>: shown as captured` (the body
/// could not be decoded, so `text` holds the raw bytes, which must not be encoded again).
/// Other tools' comments match neither shape and change nothing.
struct HARWriterRemarks {
    private let remarks: [Substring]

    init(comment: String?) {
        remarks = comment.map { $0.split(separator: "; ", omittingEmptySubsequences: true) } ?? []
    }

    /// `side` is `request` or `response`.
    func isTruncated(_ side: String) -> Bool {
        remarks.contains { $0.hasPrefix("\(side) body truncated: ") && $0.hasSuffix(" bytes captured") }
    }

    func isStoredRaw(_ side: String) -> Bool {
        remarks.contains { $0.hasPrefix("\(side) body: ") && $0.hasSuffix(": shown as captured") }
    }
}
