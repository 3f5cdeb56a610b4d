import NIOCore
import ProxyCore

/// What a client sent first inside a CONNECT tunnel, which decides how the tunnel is handled.
enum FirstBytes: Equatable {
    /// A TLS ClientHello: intercept (or pass through a pinned host).
    case tls(TLSClientHello)
    /// An HTTP/1 request line: proxy it as plain HTTP.
    case http
    /// Anything else: relay the bytes untouched.
    case opaque
    /// Too few bytes to tell yet.
    case needMore

    /// Looks at the bytes buffered so far without consuming them.
    static func classify(_ buffer: ByteBuffer) -> FirstBytes {
        let bytes = buffer.readableBytesView
        guard let first = bytes.first else { return .needMore }
        if first == 0x16 {
            switch TLSClientHelloParser.parse(bytes) {
            case .clientHello(let hello): return .tls(hello)
            case .needMoreData: return .needMore
            case .notTLS: return .opaque
            }
        }
        switch TLSClientHelloParser.looksLikeHTTP(bytes) {
        case true?: return requestLine(bytes)
        case false?: return .opaque
        case nil: return .needMore
        }
    }

    /// A method and a space is not enough (IRC's `NICK x`, Redis's `SET k v`): the first line
    /// must be `METHOD SP target SP HTTP/1.x`.
    private static func requestLine(_ bytes: ByteBufferView) -> FirstBytes {
        guard let end = bytes.firstIndex(of: UInt8(ascii: "\n")) else { return .needMore }
        var line = bytes[..<end]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        guard let firstSpace = line.firstIndex(of: UInt8(ascii: " ")),
              let lastSpace = line.lastIndex(of: UInt8(ascii: " ")), lastSpace > firstSpace + 1 else {
            return .opaque
        }
        let version = line[(lastSpace + 1)...]
        return version.count == 8 && version.starts(with: "HTTP/1.".utf8) ? .http : .opaque
    }
}
