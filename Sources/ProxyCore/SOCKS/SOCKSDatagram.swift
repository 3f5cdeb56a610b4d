/// The header RFC 1928 §7 puts in front of every datagram relayed for a `UDP ASSOCIATE`:
/// `RSV(2) FRAG(1) ATYP(1) DST.ADDR DST.PORT(2)`, then the payload. Sans-IO: bytes in, a
/// destination and the payload's offset out; and the same header written for answers.
public enum SOCKSDatagram {
    /// Where a client's datagram goes.
    public enum Destination: Hashable, Sendable, CustomStringConvertible {
        case address(IPAddressBytes)
        case domain(String)

        public var description: String {
            switch self {
            case .address(let address): address.description
            case .domain(let name): name
            }
        }
    }

    public enum Parsed: Hashable, Sendable {
        /// The payload starts at `payloadOffset`.
        case datagram(destination: Destination, port: Int, payloadOffset: Int)
        /// A fragment (FRAG ≠ 0): RFC 1928 lets a server drop those, and this one does.
        case fragment
        /// Not a SOCKS5 UDP header, in words.
        case invalid(reason: String)
    }

    public static func parse(_ bytes: some RandomAccessCollection<UInt8>) -> Parsed {
        let bytes = Array(bytes)
        guard bytes.count >= 4 else { return .invalid(reason: "shorter than a SOCKS5 UDP header") }
        guard bytes[0] == 0, bytes[1] == 0 else { return .invalid(reason: "its reserved bytes are not zero") }
        guard bytes[2] == 0 else { return .fragment }
        let destination: Destination
        var offset = 4
        switch bytes[3] {
        case 0x01:
            guard bytes.count >= offset + 4 + 2 else { return .invalid(reason: "its IPv4 address is cut short") }
            destination = .address(IPAddressBytes(bytes: Array(bytes[offset..<offset + 4]))!)  // 4 bytes: always one
            offset += 4
        case 0x04:
            guard bytes.count >= offset + 16 + 2 else { return .invalid(reason: "its IPv6 address is cut short") }
            destination = .address(IPAddressBytes(bytes: Array(bytes[offset..<offset + 16]))!)  // 16 bytes: always one
            offset += 16
        case 0x03:
            guard bytes.count >= offset + 1 else { return .invalid(reason: "its host name is cut short") }
            let length = Int(bytes[offset])
            guard length > 0, bytes.count >= offset + 1 + length + 2 else {
                return .invalid(reason: "its host name is empty or cut short")
            }
            guard let name = String(validating: bytes[(offset + 1)..<(offset + 1 + length)], as: UTF8.self) else {
                return .invalid(reason: "its host name is not UTF-8")
            }
            destination = .domain(name)
            offset += 1 + length
        default:
            return .invalid(reason: "its address type \(bytes[3]) is not IPv4, IPv6 or a name")
        }
        let port = Int(bytes[offset]) << 8 | Int(bytes[offset + 1])
        guard port > 0 else { return .invalid(reason: "its port is 0") }
        return .datagram(destination: destination, port: port, payloadOffset: offset + 2)
    }

    /// The header for an answer from `source` (an IP address), to put before its payload.
    public static func header(from source: IPAddressBytes, port: Int) -> [UInt8] {
        let type: UInt8 = source.isIPv4 ? 0x01 : 0x04
        return [0, 0, 0, type] + source.bytes + [UInt8(port >> 8 & 0xFF), UInt8(port & 0xFF)]
    }
}
