/// Reads a ClientHello from bytes that arrive in pieces, looking at each byte once.
///
/// A tunnel's first bytes come in reads of any size, down to one byte each; parsing the whole
/// buffer again on every read made a 66 KB hello of one-byte records cost a third of a second
/// of CPU. This keeps the reassembly state (where the current record header or payload stands,
/// the handshake bytes so far) between `feed` calls, so the total work is linear in the input:
/// each input byte is examined once, the reassembled message is copied once and its body is
/// parsed once (`ClientHelloBodyParser`). The answer is the one `TLSClientHelloParser.parse`
/// gives for all bytes fed so far; once it is `.clientHello` or `.notTLS` it never changes and
/// later bytes are not looked at.
///
/// Record layer rules: content type handshake (22); version 0x0300 to 0x0304 (RFC 5246
/// Appendix E lets the first ClientHello record say 0x0300, RFC 8446 §5.1 says 0x0301 or
/// 0x0303; 0x0304 is tolerated as before); a length of 1 to 2^14 (empty handshake fragments are
/// forbidden and would let headers repeat forever); no bytes of the record holding the end of
/// the message may follow the message (a second handshake message cannot come before the
/// server answered).
public struct TLSClientHelloReader: Sendable {
    public typealias Parser = TLSClientHelloParser

    /// The answer so far.
    public private(set) var result: Parser.Result = .needMoreData
    /// Bytes of the current record header seen so far (0–4; 5 means a payload is being read).
    private var headerCount = 0
    /// The header's length field, as far as it is read.
    private var recordLength = 0
    /// Payload bytes of the current record still to come.
    private var recordRemaining = 0
    /// The handshake message so far: type, 24-bit length, body.
    private var handshake: [UInt8] = []
    /// The message's length once its header is complete.
    private var messageLength: Int?
    /// Every byte the reader looked at or copied (input bytes, and the message once for the body
    /// parse): for the test that proves the work is linear.
    public private(set) var bytesExamined = 0

    public init() {}

    /// Reads `bytes`, the client's next bytes, and returns the answer for everything fed so far.
    @discardableResult
    public mutating func feed(_ bytes: some Collection<UInt8>) -> Parser.Result {
        guard result == .needMoreData else { return result }
        if let answer = bytes.withContiguousStorageIfAvailable({ feed(buffer: $0) }) {
            return answer
        }
        return Array(bytes).withUnsafeBufferPointer { feed(buffer: $0) }
    }

    private mutating func feed(buffer: UnsafeBufferPointer<UInt8>) -> Parser.Result {
        var index = 0
        while index < buffer.count, result == .needMoreData {
            if headerCount < 5 {
                bytesExamined += 1
                headerByte(buffer[index])
                index += 1
            } else {
                let count = min(recordRemaining, buffer.count - index)
                bytesExamined += count
                payload(UnsafeBufferPointer(rebasing: buffer[index..<(index + count)]))
                index += count
            }
        }
        return result
    }

    /// One byte of a record header: content type, version (two bytes), length (two bytes).
    private mutating func headerByte(_ byte: UInt8) {
        switch headerCount {
        case 0 where byte != Parser.handshakeContentType,
             1 where byte != 3,
             2 where byte > 4:
            result = .notTLS
            return
        case 3:
            recordLength = Int(byte) << 8
        case 4:
            recordLength |= Int(byte)
            guard recordLength >= 1, recordLength <= Parser.maximumRecordLength else {
                result = .notTLS
                return
            }
            recordRemaining = recordLength
        default:
            break
        }
        headerCount += 1
    }

    /// Payload bytes of the current record (at most what is left of it).
    private mutating func payload(_ bytes: UnsafeBufferPointer<UInt8>) {
        handshake.append(contentsOf: bytes)
        recordRemaining -= bytes.count
        if recordRemaining == 0 { headerCount = 0 }
        guard handshake.first == Parser.clientHelloMessageType else {
            result = .notTLS
            return
        }
        if messageLength == nil, handshake.count >= 4 {
            let length = Int(handshake[1]) << 16 | Int(handshake[2]) << 8 | Int(handshake[3])
            guard length <= Parser.maximumClientHelloLength else {
                result = .notTLS
                return
            }
            messageLength = length
            handshake.reserveCapacity(4 + length)
        }
        guard let messageLength, handshake.count >= 4 + messageLength else { return }
        // The record that ends the message must end with it: more handshake bytes would be a
        // second message, which a client cannot send before the server answered.
        guard handshake.count == 4 + messageLength, recordRemaining == 0 else {
            result = .notTLS
            return
        }
        bytesExamined += messageLength
        result = ClientHelloBodyParser.parse(handshake[4...]).map(Parser.Result.clientHello) ?? .notTLS
        handshake = []
    }
}
