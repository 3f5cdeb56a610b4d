import NIOCore

/// The few bytes of DNS (RFC 1035) a test server needs: the question of a query, and an answer
/// to it with A/AAAA records or an error code. Anything else is not a query it answers.
public enum DNSMessage {
    /// Record types a resolver asks for addresses with.
    public enum RecordType: UInt16, Sendable {
        case a = 1
        case aaaa = 28
    }

    /// A query's ID, name (lower case, no trailing dot), type, and the question's bytes as sent.
    public struct Query: Sendable {
        public var id: UInt16
        public var name: String
        public var type: UInt16
        var question: ByteBuffer
    }

    /// Reads a query (one question, QR clear); nil for anything else.
    public static func parseQuery(_ packet: ByteBuffer) -> Query? {
        var buffer = packet
        guard let id = buffer.readInteger(as: UInt16.self), let flags = buffer.readInteger(as: UInt16.self),
              flags & 0x8000 == 0, buffer.readInteger(as: UInt16.self) == 1,
              buffer.readSlice(length: 6) != nil else { return nil }
        let questionStart = buffer.readerIndex
        var labels: [String] = []
        while true {
            guard let length = buffer.readInteger(as: UInt8.self), length < 64 else { return nil }
            if length == 0 { break }
            guard let label = buffer.readString(length: Int(length)) else { return nil }
            labels.append(label.lowercased())
        }
        guard let type = buffer.readInteger(as: UInt16.self), buffer.readInteger(as: UInt16.self) != nil,
              let question = packet.getSlice(at: questionStart, length: buffer.readerIndex - questionStart) else {
            return nil
        }
        return Query(id: id, name: labels.joined(separator: "."), type: type, question: question)
    }

    /// The answer to `query`: `addresses` of the asked type as records (others skipped: an
    /// empty answer is NODATA), with `rcode` (0 success, 2 SERVFAIL, 3 NXDOMAIN, 5 REFUSED).
    public static func answer(_ query: Query, addresses: [SocketAddress], rcode: UInt8 = 0) -> ByteBuffer {
        let records = addresses.compactMap { address -> [UInt8]? in
            switch (address, query.type) {
            case (.v4(let v4), RecordType.a.rawValue):
                return withUnsafeBytes(of: v4.address.sin_addr) { Array($0) }
            case (.v6(let v6), RecordType.aaaa.rawValue):
                return withUnsafeBytes(of: v6.address.sin6_addr) { Array($0) }
            default:
                return nil
            }
        }
        var buffer = ByteBuffer()
        buffer.writeInteger(query.id)
        buffer.writeInteger(UInt16(0x8180) | UInt16(rcode & 0x0F))  // response, recursion desired and available
        buffer.writeInteger(UInt16(1))
        buffer.writeInteger(UInt16(rcode == 0 ? records.count : 0))
        buffer.writeInteger(UInt16(0))
        buffer.writeInteger(UInt16(0))
        var question = query.question
        buffer.writeBuffer(&question)
        guard rcode == 0 else { return buffer }
        for record in records {
            buffer.writeInteger(UInt16(0xC00C))  // the name: a pointer to the question's
            buffer.writeInteger(query.type)
            buffer.writeInteger(UInt16(1))  // class IN
            buffer.writeInteger(UInt32(60))  // TTL
            buffer.writeInteger(UInt16(record.count))
            buffer.writeBytes(record)
        }
        return buffer
    }
}
