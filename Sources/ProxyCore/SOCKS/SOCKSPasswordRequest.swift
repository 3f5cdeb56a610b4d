/// RFC 1929's username/password sub-negotiation, read from the bytes a SOCKS5 client sends
/// after the server chose method `0x02`: version `0x01`, a length-prefixed user name, a
/// length-prefixed password. Sans-IO: bytes in, a decision out, split anywhere.
public enum SOCKSPasswordRequest {
    public enum Parsed: Hashable, Sendable {
        /// More bytes are needed.
        case incomplete
        case complete(user: [UInt8], password: [UInt8], consumed: Int)
        /// Not RFC 1929, in words.
        case invalid(reason: String)
    }

    /// The most bytes a valid request takes (1 + 1 + 255 + 1 + 255).
    public static let maximumLength = 513

    public static func parse(_ bytes: [UInt8]) -> Parsed {
        guard let version = bytes.first else { return .incomplete }
        guard version == 0x01 else {
            return .invalid(reason: "the SOCKS5 login is not RFC 1929 version 1 (got \(version))")
        }
        guard bytes.count >= 2 else { return .incomplete }
        let userLength = Int(bytes[1])
        guard userLength > 0 else { return .invalid(reason: "the SOCKS5 login has an empty user name") }
        guard bytes.count >= 2 + userLength + 1 else { return .incomplete }
        let passwordLength = Int(bytes[2 + userLength])
        let end = 3 + userLength + passwordLength
        guard bytes.count >= end else { return .incomplete }
        return .complete(user: Array(bytes[2..<(2 + userLength)]), password: Array(bytes[(3 + userLength)..<end]),
                         consumed: end)
    }

    /// The server's answer: version 1, status 0 (success) or 1 (failure).
    public static func reply(success: Bool) -> [UInt8] { [0x01, success ? 0x00 : 0x01] }
}
