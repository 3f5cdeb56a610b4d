import BodyCodec
import Foundation

/// Turns a HAR body (decoded text, or base64) back into the bytes a `Flow` stores: raw, as sent,
/// still content-encoded.
///
/// HAR writers put the decoded body in `text`; the capture store keeps what crossed the wire, so
/// exports and `--raw` reproduce it. The body is therefore encoded again per its
/// `Content-Encoding` (the bytes differ from the origin's, the content does not). When that is
/// impossible (an encoding we cannot produce), the decoded bytes are kept and a note says so;
/// nothing is dropped. Bodies their writer stored raw are kept as they are: those that decode
/// under their `Content-Encoding`, those that begin with the outer encoding's magic bytes (a
/// truncated or corrupt gzip, deflate or zstd stream: never valid UTF-8 text), and those our own
/// export marked as shown raw (`rawAlready`). A truncated br stream has no magic and is encoded
/// again unless so marked.
enum HARBodyRestorer {
    enum Failure: Error, Equatable {
        case badBase64
        case unsupportedEncoding(String)
    }

    /// A body's bytes as the HAR holds them (decoded), up to the import's limit, and the full size.
    typealias Decoded = (bytes: [UInt8], size: Int64)

    /// The body's decoded bytes, or nil when the HAR holds no text. `encoding` is `base64` or absent.
    static func decodedBytes(text: HARBodyText?, encoding: String?) throws(Failure) -> Decoded? {
        guard let text else { return nil }
        switch encoding?.lowercased() {
        case nil, "": return text.text
        case "base64":
            // Some writers wrap base64 at 76 columns; anything else that is not base64 is an error.
            guard let decoded = text.decodedBase64 else { throw .badBase64 }
            return decoded
        case let other?:
            throw .unsupportedEncoding(other)
        }
    }

    /// The bytes to store for a decoded body sent with `contentEncoding`, and a note when they
    /// had to stay decoded. `side` names the body in the note ("request", "response").
    static func storedBytes(_ decoded: [UInt8], contentEncoding: String?, side: String, rawAlready: Bool = false)
        -> (bytes: [UInt8], note: String?)
    {
        guard let contentEncoding, !decoded.isEmpty, !rawAlready else { return (decoded, nil) }
        let (encodings, unknown) = ContentEncoding.list(from: contentEncoding)
        if encodings.isEmpty && unknown.isEmpty { return (decoded, nil) }
        if unknown.isEmpty, let outer = encodings.last, hasMagic(of: outer, decoded) { return (decoded, nil) }
        if unknown.isEmpty, case .decoded = BodyDecoder.decode(decoded, contentEncoding: contentEncoding) {
            return (decoded, nil)
        }
        do {
            return (try BodyEncoder.encode(decoded, contentEncoding: contentEncoding), nil)
        } catch {
            return (decoded, "\(side) body stored decoded: \(error)")
        }
    }

    /// The stream header an encoder writes first: gzip `1F 8B 08`, zlib `78 xx` with its check
    /// bits, zstd `28 B5 2F FD`. br streams have none.
    static func hasMagic(of encoding: ContentEncoding, _ bytes: [UInt8]) -> Bool {
        switch encoding {
        case .gzip: return bytes.starts(with: [0x1F, 0x8B, 0x08])
        case .deflate: return bytes.count >= 2 && bytes[0] == 0x78 && (UInt16(bytes[0]) << 8 | UInt16(bytes[1])) % 31 == 0
        case .zstd: return bytes.starts(with: [0x28, 0xB5, 0x2F, 0xFD])
        case .br: return false
        }
    }
}
