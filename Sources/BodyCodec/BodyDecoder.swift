/// Turns a captured body into what its sender meant, undoing its `Content-Encoding`.
///
/// One place for export, the TUI and rules. It never traps on hostile input: a corrupt stream,
/// an unknown encoding or output beyond `limit` (a 1 KB "zip bomb" can claim gigabytes) gives
/// the raw bytes back with a one-line note instead.
public enum BodyDecoder {
    /// What decoding produced.
    public enum Result: Sendable, Equatable {
        /// Every encoding was undone.
        case decoded([UInt8])
        /// The bytes as captured, and why they could not be decoded.
        case raw([UInt8], note: String)

        public var bytes: [UInt8] {
            switch self {
            case .decoded(let bytes), .raw(let bytes, _): return bytes
            }
        }

        public var note: String? {
            if case .raw(_, let note) = self { return note }
            return nil
        }

        /// Why the bytes could not be decoded, without the viewer's "shown as captured": for
        /// callers that do something else with the body (send it unchanged, refuse an edit).
        public var reason: String? {
            note.map { $0.hasSuffix(BodyDecoder.shownAsCaptured) ? String($0.dropLast(BodyDecoder.shownAsCaptured.count)) : $0 }
        }
    }

    /// How every note ends: the body is shown as it was captured.
    static let shownAsCaptured = ": shown as captured"

    /// Decoded output larger than this is refused (default 64 MiB).
    public static let defaultLimit = 64 << 20

    /// Decodes `body` per the `Content-Encoding` header value (nil or empty: nothing to do).
    public static func decode(_ body: [UInt8], contentEncoding: String?, limit: Int = defaultLimit) -> Result {
        guard let contentEncoding, !body.isEmpty else { return .decoded(body) }
        let (encodings, unknown) = ContentEncoding.list(from: contentEncoding)
        if let name = unknown.first {
            return .raw(body, note: "unknown content encoding '\(name)'" + shownAsCaptured)
        }
        var bytes = body
        for encoding in encodings.reversed() {
            do {
                bytes = try decode(bytes, as: encoding, limit: limit)
            } catch {
                return .raw(body, note: "\(error)" + shownAsCaptured)
            }
        }
        return .decoded(bytes)
    }

    /// Undoes one encoding.
    public static func decode(_ bytes: [UInt8], as encoding: ContentEncoding, limit: Int) throws(DecodingError)
        -> [UInt8]
    {
        switch encoding {
        case .gzip:
            return try ZlibInflater.inflate(bytes, format: .gzipOrZlib, limit: limit, name: "gzip")
        case .deflate:
            // RFC 9110 says zlib-wrapped; some servers send raw deflate. Try both.
            do {
                return try ZlibInflater.inflate(bytes, format: .zlib, limit: limit, name: "deflate")
            } catch let error where !error.isLimit {
                return try ZlibInflater.inflate(bytes, format: .raw, limit: limit, name: "deflate")
            }
        case .br:
            return try BrotliInflater.inflate(bytes, limit: limit)
        case .zstd:
            return try ZstdInflater.inflate(bytes, limit: limit)
        }
    }
}

/// Why a body could not be decoded, in one line.
public struct DecodingError: Error, CustomStringConvertible, Sendable, Equatable {
    public let description: String
    /// The output would have passed the limit (a decompression bomb, or just a huge body).
    public let isLimit: Bool

    static func corrupt(_ name: String, _ detail: String) -> DecodingError {
        DecodingError(description: "corrupt \(name) body (\(detail))", isLimit: false)
    }

    static func tooLarge(_ name: String, limit: Int) -> DecodingError {
        DecodingError(description: "\(name) body decodes to more than \(limit) bytes", isLimit: true)
    }
}
