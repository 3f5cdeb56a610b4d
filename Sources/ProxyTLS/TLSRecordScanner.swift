/// Follows the record boundaries of one direction of a TLS connection as its bytes pass,
/// without holding them: which record is in progress, where the next one starts.
///
/// It reads only the 5-byte record headers (type, version, length; RFC 8446 §5.1) and hands
/// each payload byte to the caller with its record's content type. It never traps: a length
/// field is only a count, and nothing is buffered but a header in progress. Used on the
/// handshake only (`HandshakeWireEvidence`), on both the client's bytes and our own.
struct TLSRecordScanner: Sendable {
    /// The content types of RFC 8446 §5.1.
    enum ContentType {
        static let changeCipherSpec: UInt8 = 20
        static let alert: UInt8 = 21
        static let handshake: UInt8 = 22
        static let applicationData: UInt8 = 23
    }

    /// One step of the scan, in stream order.
    enum Step {
        /// A record header was read: its content type and payload length.
        case header(contentType: UInt8, length: Int)
        /// One payload byte of the record in progress.
        case payload(contentType: UInt8, byte: UInt8)
    }

    private var header: (UInt8, UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0, 0)
    private var headerCount = 0
    private var contentType: UInt8 = 0
    private var remaining = 0

    /// True between records: the next byte is the first of a record header.
    var atRecordBoundary: Bool { headerCount == 0 && remaining == 0 }

    /// Scans `bytes`, calling `step` for every header and payload byte in order. Payload bytes
    /// are reported only while `wantsPayload(contentType)` holds, so a large encrypted record
    /// costs a counter update, not a call per byte.
    mutating func scan(_ bytes: some Sequence<UInt8>, wantsPayload: (UInt8) -> Bool, _ step: (Step) -> Void) {
        var iterator = bytes.makeIterator()
        while true {
            if remaining > 0 {
                guard wantsPayload(contentType) else {
                    // Skip what is left of this record without looking at it.
                    while remaining > 0, iterator.next() != nil { remaining -= 1 }
                    if remaining > 0 { return }
                    continue
                }
                guard let byte = iterator.next() else { return }
                remaining -= 1
                step(.payload(contentType: contentType, byte: byte))
                continue
            }
            guard let byte = iterator.next() else { return }
            switch headerCount {
            case 0: header.0 = byte
            case 1: header.1 = byte
            case 2: header.2 = byte
            case 3: header.3 = byte
            default: header.4 = byte
            }
            headerCount += 1
            guard headerCount == 5 else { continue }
            headerCount = 0
            contentType = header.0
            remaining = Int(header.3) << 8 | Int(header.4)
            step(.header(contentType: contentType, length: remaining))
        }
    }
}
