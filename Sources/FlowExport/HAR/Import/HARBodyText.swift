/// A body's `text` from a HAR file (`postData.text`, `content.text`), read as it streams and
/// kept only up to the import's body limit (`--max-body-size`), with its full size counted: a
/// 300 MB body costs the limit in memory, not 300 MB (and not the 1.2 GB `JSONDecoder` needed).
///
/// Whether the text is base64 is said by `encoding`, which may come after `text` in the object,
/// so both readings are kept while the text streams: its first bytes as they are, and its first
/// bytes base64-decoded (until a character shows it is not base64).
struct HARBodyText {
    let limit: Int
    /// The first `limit` bytes of the text's UTF-8.
    private(set) var prefix: [UInt8] = []
    /// All of the text's UTF-8 bytes.
    private(set) var count: Int64 = 0
    private(set) var base64: Base64StreamDecoder

    init(limit: Int) {
        self.limit = limit
        base64 = Base64StreamDecoder(limit: limit)
    }

    mutating func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        let room = limit - prefix.count
        if room > 0 { prefix.append(contentsOf: UnsafeBufferPointer(rebasing: bytes.prefix(room))) }
        count += Int64(bytes.count)
        base64.append(bytes)
    }

    /// The body as plain text: the kept bytes (bytes that are not UTF-8 read as U+FFFD, as the
    /// whole file was before) and the full size.
    var text: (bytes: [UInt8], size: Int64) {
        guard String(validating: prefix, as: UTF8.self) == nil else { return (prefix, count) }
        // A cut may have split the last character: that is not the writer's fault.
        var valid = prefix
        if count > prefix.count {
            var cut = valid.count
            while cut > 0, cut > valid.count - 4, valid[cut - 1] & 0xC0 == 0x80 { cut -= 1 }
            if cut > 0, valid[cut - 1] >= 0xC0 { valid.removeSubrange((cut - 1)...) }
        }
        let repaired = Array(String(decoding: valid, as: UTF8.self).utf8.prefix(limit))
        return (repaired, max(count, Int64(repaired.count)))
    }

    /// The body decoded from base64, and its full decoded size; nil when the text is not base64.
    var decodedBase64: (bytes: [UInt8], size: Int64)? {
        base64.isComplete ? (base64.bytes, base64.decodedCount) : nil
    }
}
