import CZstd
import FlowFilter
import Foundation
import GRDB

/// The text a flow's index row was made from, kept compressed in `flows_fts_text`, because FTS5
/// can remove a row only given the exact text it indexed (`FullTextIndex`).
///
/// FTS5's own copy of that text (its default) was the largest part of a capture: 2.9 KB of
/// 5.4 KB per flow on the bench's mix. Compressed with zstd it is a fraction of that, and the
/// index reads it back only when rows leave and for excerpts (`proxyapp search`).
///
/// Layout: one format byte (0: as is, 1: zstd), then the five fields of `FullTextDocument` in
/// `FullTextField` order, each a little-endian UInt32 length and its UTF-8 bytes.
enum FullTextStoredDocument {
    /// Documents shorter than this are kept as they are: compressing them saves little, and
    /// cost the writer microseconds a flow (most flows are a URL and headers).
    static let compressionThreshold = 1_024

    /// The field `index` of a stored document; "" for a malformed one (the caller is FTS5,
    /// which must not fail a delete over it).
    static func field(_ stored: [UInt8], _ index: Int) -> String {
        guard let format = stored.first else { return "" }
        let payload: [UInt8]
        switch format {
        case 0: payload = Array(stored.dropFirst())
        case 1: payload = decompressed(stored.dropFirst()) ?? []
        default: return ""
        }
        var offset = 0
        for current in 0...index {
            guard offset + 4 <= payload.count else { return "" }
            let length = Int(payload[offset]) | Int(payload[offset + 1]) << 8 | Int(payload[offset + 2]) << 16
                | Int(payload[offset + 3]) << 24
            offset += 4
            guard offset + length <= payload.count else { return "" }
            if current == index { return String(decoding: payload[offset..<(offset + length)], as: UTF8.self) }
            offset += length
        }
        return ""
    }

    private static func decompressed(_ input: ArraySlice<UInt8>) -> [UInt8]? {
        input.withUnsafeBytes { source -> [UInt8]? in
            guard let base = source.baseAddress else { return nil }
            let size = ZSTD_getFrameContentSize(base, source.count)
            // Each field is bounded (`FullTextDocument`): a claim beyond that is not ours.
            guard size != ZSTD_CONTENTSIZE_UNKNOWN, size != ZSTD_CONTENTSIZE_ERROR, size <= 16 << 20 else { return nil }
            var output = [UInt8](repeating: 0, count: Int(size))
            let written = output.withUnsafeMutableBytes { ZSTD_decompress($0.baseAddress, $0.count, base, source.count) }
            return ZSTD_isError(written) != 0 || written != Int(size) ? nil : output
        }
    }

    /// `proxyapp_fts_field(document, index)`: the view FTS5 reads its text through.
    static let function = DatabaseFunction("proxyapp_fts_field", argumentCount: 2, pure: true) { arguments in
        guard let blob = Data.fromDatabaseValue(arguments[0]), let index = Int.fromDatabaseValue(arguments[1]),
              FullTextField.allCases.indices.contains(index)
        else { return "" }
        return field([UInt8](blob), index)
    }
}

/// Encodes documents for `flows_fts_text` with one zstd context for a whole batch (a context
/// per flow would cost more than compressing it).
final class FullTextDocumentEncoder {
    private let context: OpaquePointer?

    init() {
        context = ZSTD_createCCtx()
    }

    deinit {
        ZSTD_freeCCtx(context)
    }

    func encode(_ document: FullTextDocument) -> [UInt8] {
        var payload: [UInt8] = []
        for field in FullTextField.allCases {
            var text = document[field]
            text.withUTF8 { bytes in
                let count = UInt32(bytes.count)
                payload += [UInt8(truncatingIfNeeded: count), UInt8(truncatingIfNeeded: count >> 8),
                            UInt8(truncatingIfNeeded: count >> 16), UInt8(truncatingIfNeeded: count >> 24)]
                payload.append(contentsOf: bytes)
            }
        }
        guard payload.count >= FullTextStoredDocument.compressionThreshold, let context else { return [0] + payload }
        var output = [UInt8](repeating: 0, count: 1 + ZSTD_compressBound(payload.count))
        output[0] = 1
        let written = output.withUnsafeMutableBytes { target in
            ZSTD_compressCCtx(context, target.baseAddress! + 1, target.count - 1, payload, payload.count, 1)
        }
        guard ZSTD_isError(written) == 0 else { return [0] + payload }
        output.removeLast(output.count - 1 - written)
        return output
    }
}
