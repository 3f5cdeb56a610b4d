import NIOCore
import ProxyCore

/// What a client sent first inside a CONNECT tunnel, which decides how the tunnel is handled.
enum FirstBytes: Equatable {
    /// A TLS ClientHello: intercept (or pass through a pinned host).
    case tls(TLSClientHello)
    /// An HTTP/1 request line: proxy it as plain HTTP.
    case http
    /// The HTTP/2 connection preface (`PRI * HTTP/2.0`): cleartext HTTP/2 with prior knowledge.
    case http2PriorKnowledge
    /// Anything else: relay the bytes untouched.
    case opaque
    /// Too few bytes to tell yet.
    case needMore

    /// Classifies `buffer` in one go (tests; the sniffer keeps a `FirstBytesClassifier`).
    static func classify(_ buffer: ByteBuffer) -> FirstBytes {
        var classifier = FirstBytesClassifier()
        return classifier.classify(buffer.readableBytesView)
    }
}

/// Decides `FirstBytes` for a buffer that only grows, looking at each new byte once.
///
/// The sniffer calls `classify` after every read with everything it holds; the classifier
/// remembers how far it has looked, so a client trickling its first bytes one at a time costs
/// linear work, not a re-scan per read: the ClientHello is reassembled incrementally
/// (`TLSClientHelloReader`), the HTTP method is counted as it arrives, and the end of the
/// request line is searched for only in the new bytes.
struct FirstBytesClassifier {
    private enum Mode {
        case undecided
        /// A handshake record: `hello` reads it.
        case tls
        /// Letters of the method counted so far, until its space.
        case method(letters: Int)
        /// The method and its space were seen; looking for the line's end from `scanned` on.
        case requestLine(scanned: Int)
    }

    private var mode = Mode.undecided
    /// Kept outside `mode` so that feeding it mutates in place (an enum payload would be
    /// copied, and its buffer with it, on every read).
    private var hello = TLSClientHelloReader()
    /// Bytes of the buffer already examined.
    private var examined = 0
    /// What the ClientHello reader looked at (the linear-work test reads it).
    var helloBytesExamined: Int { hello.bytesExamined }
    /// The longest method accepted (`looksLikeHTTP`'s limit).
    private static let maximumMethodLength = 20

    /// The decision for `bytes`, everything the client sent so far (a prefix of it was passed
    /// to the previous call).
    mutating func classify(_ bytes: ByteBufferView) -> FirstBytes {
        guard let first = bytes.first else { return .needMore }
        if case .undecided = mode {
            mode = first == 0x16 ? .tls : .method(letters: 0)
        }
        let new = bytes.dropFirst(examined)
        examined = bytes.count
        switch mode {
        case .undecided:
            return .needMore
        case .tls:
            switch hello.feed(new) {
            case .clientHello(let hello): return .tls(hello)
            case .needMoreData: return .needMore
            case .notTLS: return .opaque
            }
        case .method(var letters):
            for index in new.indices {
                let byte = new[index]
                if byte == UInt8(ascii: " "), letters > 0 {
                    mode = .requestLine(scanned: index - bytes.startIndex + 1)
                    return lineEnd(in: bytes)
                }
                guard byte >= UInt8(ascii: "A"), byte <= UInt8(ascii: "Z"), letters < Self.maximumMethodLength else {
                    return .opaque
                }
                letters += 1
            }
            mode = .method(letters: letters)
            return .needMore
        case .requestLine:
            return lineEnd(in: bytes)
        }
    }

    /// Looks for the request line's end in the bytes not searched yet; decides on the line.
    private mutating func lineEnd(in bytes: ByteBufferView) -> FirstBytes {
        guard case .requestLine(let scanned) = mode else { return .needMore }
        let unsearched = bytes.dropFirst(scanned)
        guard let end = unsearched.firstIndex(of: UInt8(ascii: "\n")) else {
            mode = .requestLine(scanned: bytes.count)
            return .needMore
        }
        return Self.requestLine(bytes[..<end])
    }

    /// A method and a space is not enough (IRC's `NICK x`, Redis's `SET k v`): the first line
    /// must be `METHOD SP target SP HTTP/1.x`.
    private static func requestLine(_ bytes: ByteBufferView.SubSequence) -> FirstBytes {
        var line = bytes
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        guard let firstSpace = line.firstIndex(of: UInt8(ascii: " ")),
              let lastSpace = line.lastIndex(of: UInt8(ascii: " ")), lastSpace > firstSpace + 1 else {
            return .opaque
        }
        let version = line[(lastSpace + 1)...]
        if line.elementsEqual("PRI * HTTP/2.0".utf8) { return .http2PriorKnowledge }
        return version.count == 8 && version.starts(with: "HTTP/1.".utf8) ? .http : .opaque
    }
}
