import NIOCore
import ProxyCore

/// What a client sent first inside a CONNECT tunnel, which decides how the tunnel is handled.
enum FirstBytes: Equatable {
    /// A TLS ClientHello: intercept (or pass through a pinned host).
    case tls(serverName: String?, alpn: [String])
    /// An HTTP/1 request line: proxy it as plain HTTP.
    case http
    /// Anything else: relay the bytes untouched.
    case opaque
    /// Too few bytes to tell yet.
    case needMore

    /// Looks at the bytes buffered so far without consuming them.
    static func classify(_ buffer: ByteBuffer) -> FirstBytes {
        guard let first = buffer.readableBytesView.first else { return .needMore }
        if first == 0x16 {
            // Placeholder until the ClientHello parser lands: a handshake record is TLS.
            return buffer.readableBytes >= 5 ? .tls(serverName: nil, alpn: []) : .needMore
        }
        var length = 0
        for byte in buffer.readableBytesView.prefix(21) {
            if byte == UInt8(ascii: " ") { return length > 0 ? .http : .opaque }
            guard byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") else { return .opaque }
            length += 1
        }
        return length > 20 ? .opaque : .needMore
    }
}
