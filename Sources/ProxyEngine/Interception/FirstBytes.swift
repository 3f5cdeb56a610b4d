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
        case true?: return .http
        case false?: return .opaque
        case nil: return .needMore
        }
    }
}
