#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOCore
import NIOHTTP1

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

    /// Each status line's code and, when it differs from the standard phrase for that code,
    /// the origin's phrase (nil: the standard one), in arrival order.
    private var phrases: [(code: UInt, phrase: String?)] = []
    private var state = State.idle
    /// Bytes of a status line not complete yet (bounded by `maxLine`).
    private var partial: [UInt8] = []
    /// While skipping headers: whether the current line has anything but CR so far (0 or 1).
    private var lineLength = 0
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
        if !phrases.isEmpty { phrases.removeAll(keepingCapacity: true) }
        if !partial.isEmpty { partial.removeAll(keepingCapacity: true) }
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

    /// Reads status lines and skips header sections in `bytes`; header bytes are counted, never
    /// copied.
    private func scan(_ bytes: UnsafeRawBufferPointer) {
        var index = 0
        while index < bytes.count {
            switch state {
            case .idle:
                return
            case .statusLine:
                guard let newline = Self.firstNewline(in: bytes, from: index) else {
                    partial.append(contentsOf: bytes[index...])
                    if partial.count > Self.maxLine { disarm() }
                    return
                }
                partial.append(contentsOf: bytes[index..<newline])
                index = newline + 1
                statusLine()
            case .headers(let final):
                // Line by line: only whether a line is empty matters (CR aside).
                let end = Self.firstNewline(in: bytes, from: index) ?? bytes.count
                for byte in bytes[index..<end] where byte != UInt8(ascii: "\r") {
                    lineLength += 1
                    break  // one counted byte makes the line non-empty
                }
                guard end < bytes.count else { return }
                index = end + 1
                if lineLength == 0 {
                    state = final ? .idle : .statusLine
                }
                lineLength = 0
            }
        }
    }

    private static func firstNewline(in bytes: UnsafeRawBufferPointer, from start: Int) -> Int? {
        guard start < bytes.count, let base = bytes.baseAddress,
              let found = memchr(base + start, Int32(UInt8(ascii: "\n")), bytes.count - start) else { return nil }
        return base.distance(to: UnsafeRawPointer(found))
    }

    /// The status line in `partial` (without its LF) is complete.
    private func statusLine() {
        var line = partial[...]
        if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
        guard let (code, phrase) = Self.parseStatusLine(line) else { return disarm() }
        partial.removeAll(keepingCapacity: true)
        phrases.append((code, phrase))
        lineLength = 0
        state = .headers(final: code >= 200 || code == 101)
    }

    private func disarm() {
        state = .idle
        partial.removeAll(keepingCapacity: true)
    }

    /// `HTTP/1.x SP 3DIGIT [SP reason]` → the code and the reason when it is not the standard one
    /// for the code (visible ASCII, spaces and tabs only, at most `maxPhrase` bytes; anything
    /// else gives an empty reason).
    static func parseStatusLine(_ bytes: ArraySlice<UInt8>) -> (UInt, String?)? {
        let start = bytes.startIndex
        guard bytes.count >= 12, bytes.starts(with: "HTTP/1.".utf8), bytes[start + 8] == UInt8(ascii: " "),
              bytes[(start + 9)...(start + 11)].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
        else { return nil }
        let code = UInt(bytes[start + 9] - 48) * 100 + UInt(bytes[start + 10] - 48) * 10 + UInt(bytes[start + 11] - 48)
        guard bytes.count > 13, bytes[start + 12] == UInt8(ascii: " ") else { return (code, "") }
        let phrase = bytes[(start + 13)...]
        guard phrase.count <= maxPhrase,
              phrase.allSatisfy({ ($0 >= 0x20 && $0 < 0x7F) || $0 == 0x09 }) else { return (code, "") }
        if phrase.elementsEqual(HTTPResponseStatus(statusCode: Int(code)).reasonPhrase.utf8) { return (code, nil) }
        return (code, String(decoding: phrase, as: UTF8.self))
    }
}
