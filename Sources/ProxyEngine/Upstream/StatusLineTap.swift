import NIOCore

/// Keeps the reason phrases of an origin's status lines, which NIO's response decoder drops
/// (it rebuilds every status from its code), so a client gets `HTTP/1.1 200 Fine` when the
/// origin said so and a flow records the origin's words.
///
/// It sits in front of the decoder and reads only status lines and header sections, never a
/// body: it is armed when a request head goes out (the next bytes from the origin start a
/// response), reads a status line, skips headers to the empty line, reads the next status line
/// after an interim (1xx) response, and disarms after a final one. Anything it does not
/// understand disarms it; the decoder, which frames the message, is never affected, and a phrase
/// is used only when its status code matches the head the decoder produced.
final class StatusLineTap: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    /// A status line's code and reason phrase, in arrival order.
    private var phrases: [(code: UInt, phrase: String)] = []
    private var state = State.idle
    /// Bytes of a line not complete yet (bounded by `maxLine`).
    private var partial: [UInt8] = []
    static let maxLine = 8 << 10
    static let maxPhrase = 256

    private enum State {
        case idle
        case statusLine
        /// Skipping header lines; `final` tells whether a status line follows the empty one.
        case headers(final: Bool)
    }

    /// A request head went out: what comes back starts with a status line.
    func arm() {
        phrases.removeAll(keepingCapacity: true)
        partial.removeAll(keepingCapacity: true)
        state = .statusLine
    }

    /// The origin's phrase for the next head the decoder produced, if its code is `code` and it
    /// differs from the standard phrase (nil: use the standard one).
    func takePhrase(for code: UInt) -> String? {
        guard !phrases.isEmpty else { return nil }
        let next = phrases.removeFirst()
        return next.code == code ? next.phrase : nil
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if case .idle = state {
            context.fireChannelRead(data)
            return
        }
        let buffer = unwrapInboundIn(data)
        buffer.withUnsafeReadableBytes { scan($0) }
        context.fireChannelRead(data)
    }

    private func scan(_ bytes: UnsafeRawBufferPointer) {
        var start = 0
        var index = 0
        while index < bytes.count {
            if case .idle = state { return }
            if bytes[index] == UInt8(ascii: "\n") {
                partial.append(contentsOf: bytes[start..<index])
                line(partial)
                partial.removeAll(keepingCapacity: true)
                start = index + 1
            }
            index += 1
        }
        if case .idle = state { return }
        partial.append(contentsOf: bytes[start..<bytes.count])
        if partial.count > Self.maxLine { disarm() }
    }

    /// One line, without its LF.
    private func line(_ raw: [UInt8]) {
        var text = raw[...]
        if text.last == UInt8(ascii: "\r") { text = text.dropLast() }
        switch state {
        case .idle:
            return
        case .statusLine:
            guard let (code, phrase) = Self.parseStatusLine(text) else { return disarm() }
            phrases.append((code, phrase))
            state = .headers(final: code >= 200 || code == 101)
        case .headers(let final):
            guard text.isEmpty else { return }
            state = final ? .idle : .statusLine
        }
    }

    private func disarm() {
        state = .idle
        partial.removeAll(keepingCapacity: true)
    }

    /// `HTTP/1.x SP 3DIGIT [SP reason]` → code and reason (visible ASCII, spaces and tabs only,
    /// at most `maxPhrase` bytes; anything else gives an empty reason).
    static func parseStatusLine(_ line: ArraySlice<UInt8>) -> (UInt, String)? {
        let bytes = Array(line)
        guard bytes.count >= 12, bytes.starts(with: Array("HTTP/1.".utf8)), bytes[8] == UInt8(ascii: " "),
              bytes[9...11].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) else { return nil }
        let code = UInt(bytes[9] - 48) * 100 + UInt(bytes[10] - 48) * 10 + UInt(bytes[11] - 48)
        guard bytes.count > 13, bytes[12] == UInt8(ascii: " ") else { return (code, "") }
        let phrase = bytes[13...]
        guard phrase.count <= maxPhrase,
              phrase.allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x09 }) else { return (code, "") }
        return (code, String(decoding: phrase, as: UTF8.self))
    }
}
