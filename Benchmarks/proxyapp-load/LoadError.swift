import NIOCore
import NIOSSL

/// Why one connection or request failed, worded for the person reading the run's summary.
enum LoadError: Error, CustomStringConvertible {
    case connect(any Error)
    case connectRefused(status: Int)
    case socksRefused(step: String, answer: [UInt8])
    case tlsHandshake(any Error)
    case response(HTTPResponseScanner.ScanError)
    case unexpectedBytes(stage: LoadConnectionHandler.Stage)
    case closedByPeer(stage: LoadConnectionHandler.Stage)
    case timedOut(stage: LoadConnectionHandler.Stage, after: TimeAmount)
    case channel(any Error, stage: LoadConnectionHandler.Stage)
    case notHTTP2(negotiated: String?)
    case http2Setup(any Error)
    case stream(any Error)
    case streamEndedEarly

    var description: String {
        switch self {
        case .connect(let error):
            "connect failed: \(error)"
        case .connectRefused(let status):
            "the proxy answered CONNECT with \(status), not 200"
        case .socksRefused(let step, let answer):
            "the SOCKS5 proxy refused the \(step) (answer \(answer.map { String($0, radix: 16) }))"
        case .tlsHandshake(let error):
            "TLS handshake failed: \(Self.describe(error))"
        case .response(let error):
            "bad response: \(error)"
        case .unexpectedBytes(let stage):
            "the server sent bytes nobody asked for (\(stage.rawValue))"
        case .closedByPeer(let stage):
            "the server closed the connection \(stage == .idle ? "between requests" : stage.rawValue)"
        case .timedOut(let stage, let after):
            "no progress for \(format(Double(after.nanoseconds) / 1e9, decimals: 1)) s \(stage.rawValue)"
        case .channel(let error, let stage):
            "\(Self.describe(error)) (\(stage.rawValue))"
        case .notHTTP2(let negotiated):
            "the server did not choose HTTP/2 in ALPN (it chose \(negotiated ?? "nothing")); --h2 needs a server that speaks h2"
        case .http2Setup(let error):
            "cannot set up HTTP/2 on the connection: \(error)"
        case .stream(let error):
            "HTTP/2 stream failed: \(error)"
        case .streamEndedEarly:
            "an HTTP/2 stream closed before its response ended"
        }
    }

    /// NIOSSL's errors carry BoringSSL's error stack, which names the cause (for instance
    /// CERTIFICATE_VERIFY_FAILED); print it whole.
    private static func describe(_ error: any Error) -> String {
        if let error = error as? NIOSSLError, case .handshakeFailed(let stack) = error {
            return "handshakeFailed: \(stack)"
        }
        return String(describing: error)
    }
}
