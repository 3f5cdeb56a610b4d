import BodyCodec
import ProxyModel

/// How one captured body appears in a HAR entry: decoded per its `Content-Encoding`, then as
/// text when it is textual UTF-8, else as base64; with its decoded size and any remarks.
///
/// Request `postData` and response `content` share it, so both sides follow one rule.
struct HARBodyContent {
    enum Representation {
        /// No body bytes were captured.
        case none
        /// Valid UTF-8 for `text`.
        case text([UInt8])
        /// Bytes for `text` in base64 (`encoding: "base64"`).
        case base64([UInt8])
    }

    let representation: Representation
    /// `Content-Type` as sent, or nil.
    let contentType: String?
    /// The decoded length, or the transferred size when the body could not be decoded.
    let size: Int64
    /// Bytes saved by the content encoding (decoded − transferred), when the whole body was decoded.
    let compression: Int64?
    /// Truncation and decoding remarks, one line each.
    let remarks: [String]

    /// - Parameter side: `request` or `response`, for the remarks.
    init(body: CapturedBody, headers: [HeaderField], side: String) {
        contentType = headers.first(named: "Content-Type")
        var remarks: [String] = []
        if body.truncated {
            remarks.append("\(side) body truncated: \(body.bytes.count) of \(body.size) bytes captured")
        }
        guard !body.bytes.isEmpty else {
            representation = .none
            size = max(body.size, 0)
            compression = nil
            self.remarks = remarks
            return
        }
        let captured = [UInt8](body.bytes)
        let contentEncoding = headers.first(named: "Content-Encoding")
        let isEncoded = contentEncoding.map { value in
            let (known, unknown) = ContentEncoding.list(from: value)
            return !known.isEmpty || !unknown.isEmpty
        } ?? false
        switch BodyDecoder.decode(captured, contentEncoding: isEncoded ? contentEncoding : nil) {
        case .decoded(let decoded):
            let fullyKnown = !body.truncated
            size = fullyKnown || isEncoded ? Int64(decoded.count) : max(body.size, Int64(decoded.count))
            compression = isEncoded && fullyKnown ? Int64(decoded.count) - body.size : nil
            representation = Self.represent(decoded, contentType: contentType, mayEndMidCharacter: body.truncated)
        case .raw(let raw, let note):
            remarks.append("\(side) body: \(note)")
            size = max(body.size, Int64(raw.count))
            compression = nil
            representation = .base64(raw)
        }
        self.remarks = remarks
    }

    /// Text when the type is textual (or absent) and the bytes are UTF-8; a body cut off by the
    /// capture cap may lose its last, incomplete character for that.
    private static func represent(_ bytes: [UInt8], contentType: String?, mayEndMidCharacter: Bool) -> Representation {
        if let contentType, !MediaType(contentType).isTextual {
            return .base64(bytes)
        }
        let validLength = bytes.withUnsafeBufferPointer { UTF8Validation.validPrefixLength($0) }
        if validLength == bytes.count {
            return .text(bytes)
        }
        if mayEndMidCharacter && bytes.count - validLength < 4
            && bytes[validLength] >= 0xC2 && bytes[validLength] <= 0xF4 {
            return .text(Array(bytes[..<validLength]))
        }
        return .base64(bytes)
    }

    /// `mimeType` for HAR: the `Content-Type` as sent, or `x-unknown`.
    var mimeType: String { contentType ?? "x-unknown" }

    /// True for an `application/x-www-form-urlencoded` body shown as text.
    var isFormText: Bool {
        guard let contentType, case .text = representation else { return false }
        return MediaType(contentType).isURLEncodedForm
    }
}
