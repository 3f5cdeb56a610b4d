/// Applies a `Content-Encoding` list to a body: the inverse of `BodyDecoder`.
///
/// It exists for bodies that arrive decoded but must be stored as sent: a HAR file carries
/// `content.text` decoded, while the capture store keeps bodies raw (still encoded) so exports
/// can reproduce the exchange. Encodings are applied in the header's order (`gzip, br`: gzip
/// first, then br). Output is a valid stream for the encoding, not the origin's exact bytes (the
/// compression level is not recorded anywhere).
public enum BodyEncoder {
    /// Encodes `bytes` per the `Content-Encoding` header value; `identity` and empty entries
    /// change nothing. An encoding we cannot produce throws an error naming it, before any work.
    public static func encode(_ bytes: [UInt8], contentEncoding: String) throws(BodyEncodingError) -> [UInt8] {
        let (encodings, unknown) = ContentEncoding.list(from: contentEncoding)
        if let name = unknown.first { throw .unknownEncoding(name) }
        var output = bytes
        for encoding in encodings {
            output = try encode(output, as: encoding)
        }
        return output
    }

    /// Applies one encoding.
    public static func encode(_ bytes: [UInt8], as encoding: ContentEncoding) throws(BodyEncodingError) -> [UInt8] {
        switch encoding {
        case .gzip: return try ZlibDeflater.deflate(bytes, windowBits: ZlibDeflater.gzipWindowBits, name: "gzip")
        case .deflate: return try ZlibDeflater.deflate(bytes, windowBits: ZlibDeflater.zlibWindowBits, name: "deflate")
        case .br: return try BrotliCompressor.compress(bytes)
        case .zstd: return try ZstdCompressor.compress(bytes)
        }
    }
}

/// Why a body could not be encoded, in one line.
public struct BodyEncodingError: Error, CustomStringConvertible, Sendable, Equatable {
    public let description: String

    static func unknownEncoding(_ name: String) -> BodyEncodingError {
        BodyEncodingError(description: "cannot encode with unknown content encoding '\(name)'")
    }

    static func failed(_ name: String, _ detail: String) -> BodyEncodingError {
        BodyEncodingError(description: "\(name) encoding failed (\(detail))")
    }
}
