import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// SOCKS5 (RFC 1928, RFC 1929) spoken byte by byte over a `RawClient`, for what curl cannot be
/// made to send: BIND and UDP ASSOCIATE, a greeting without the method the proxy wants, a login
/// split over writes, and a CONNECT followed by an opaque protocol.
struct SOCKS5Wire {
    let client: RawClient

    /// The reply codes RFC 1928 §6 defines (the ones the proxy sends).
    enum Reply: UInt8 {
        case succeeded = 0x00, serverFailure = 0x01, notAllowed = 0x02, networkUnreachable = 0x03
        case hostUnreachable = 0x04, refused = 0x05, ttlExpired = 0x06, commandUnsupported = 0x07
        case addressUnsupported = 0x08
    }

    /// Sends a greeting offering `methods` and returns the method the proxy chose (`0xFF`: none).
    func greet(_ methods: [UInt8]) throws -> UInt8 {
        try client.send(Data([0x05, UInt8(methods.count)] + methods))
        let answer = try client.receive(count: 2, timeout: 10)
        guard answer.first == 0x05 else { throw RawClient.SocketError(description: "not a SOCKS5 answer: \(Array(answer))") }
        return answer[answer.startIndex + 1]
    }

    /// Sends an RFC 1929 login and returns whether the proxy accepted it.
    func login(_ user: String, _ password: String) throws -> Bool {
        try client.send(Self.loginBytes(user, password))
        let answer = try client.receive(count: 2, timeout: 10)
        return answer == Data([0x01, 0x00])
    }

    static func loginBytes(_ user: String, _ password: String) -> Data {
        Data([0x01, UInt8(user.utf8.count)] + Array(user.utf8) + [UInt8(password.utf8.count)] + Array(password.utf8))
    }

    /// Sends a request (`command` 1 CONNECT, 2 BIND, 3 UDP ASSOCIATE) for `host` (a domain name,
    /// or an IPv4 or IPv6 literal sent as such) and returns the reply code, after reading the whole reply.
    func request(_ command: UInt8 = 0x01, host: String, port: Int) throws -> UInt8 {
        try client.send(Self.requestBytes(command, host: host, port: port))
        return try readReply()
    }

    static func requestBytes(_ command: UInt8 = 0x01, host: String, port: Int) -> Data {
        var bytes: [UInt8] = [0x05, command, 0x00]
        let octets = host.split(separator: ".").compactMap { UInt8($0) }
        var ipv6 = in6_addr()
        if octets.count == 4, host.split(separator: ".").count == 4 {
            bytes += [0x01] + octets
        } else if inet_pton(AF_INET6, host, &ipv6) == 1 {
            bytes += [0x04] + withUnsafeBytes(of: &ipv6) { Array($0) }
        } else {
            bytes += [0x03, UInt8(host.utf8.count)] + Array(host.utf8)
        }
        bytes += [UInt8(port >> 8), UInt8(port & 0xFF)]
        return Data(bytes)
    }

    /// Reads one reply (`VER REP RSV ATYP BND.ADDR BND.PORT`) and returns `REP`.
    func readReply() throws -> UInt8 {
        try readReplyAndAddress().reply
    }

    /// Reads one reply; returns `REP` and the bound address's bytes and port.
    func readReplyAndAddress() throws -> (reply: UInt8, address: [UInt8], port: Int) {
        let head = try client.receive(count: 4, timeout: 15)
        let bytes = Array(head)
        guard bytes[0] == 0x05 else { throw RawClient.SocketError(description: "not a SOCKS5 reply: \(bytes)") }
        let address: [UInt8]
        switch bytes[3] {
        case 0x01: address = Array(try client.receive(count: 4, timeout: 5))
        case 0x04: address = Array(try client.receive(count: 16, timeout: 5))
        case 0x03:
            let length = Int(try client.receive(count: 1, timeout: 5).first!)
            address = Array(try client.receive(count: length, timeout: 5))
        default: throw RawClient.SocketError(description: "reply with address type \(bytes[3])")
        }
        let port = Array(try client.receive(count: 2, timeout: 5))
        return (bytes[1], address, Int(port[0]) << 8 | Int(port[1]))
    }

    /// RFC 1928 §7's header before a relayed datagram, to an IPv4 address or a name.
    static func datagramHeader(host: String, port: Int) -> Data {
        var request = Array(requestBytes(host: host, port: port))
        request[0] = 0x00
        request[1] = 0x00
        return Data(request)
    }
}
