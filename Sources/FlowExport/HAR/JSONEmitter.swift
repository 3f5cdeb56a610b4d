import Foundation
import ProxyModel

/// Writes JSON text token by token into a byte buffer that it hands to a `ByteOutput` whenever
/// it passes 64 KiB.
///
/// It exists so a HAR export can stream a million entries without building a document:
/// `JSONEncoder` and `JSONSerialization` need the whole value in memory and cost far more per
/// field. The caller is responsible for structure (commas are inserted automatically, but
/// objects and arrays must be opened and closed in order); the emitter guarantees that every
/// string is escaped and every number is finite JSON.
final class JSONEmitter {
    private let output: any ByteOutput
    private var buffer: [UInt8] = []
    /// True right after `{` or `[`: the next value or key needs no comma before it.
    private var atContainerStart = true
    private static let flushThreshold = 64 * 1024

    init(output: any ByteOutput) {
        self.output = output
        buffer.reserveCapacity(Self.flushThreshold + 4096)
    }

    // MARK: Structure

    func beginObject() { separate(); buffer.append(UInt8(ascii: "{")); atContainerStart = true }
    func endObject() { buffer.append(UInt8(ascii: "}")); atContainerStart = false; flushIfFull() }
    func beginArray() { separate(); buffer.append(UInt8(ascii: "[")); atContainerStart = true }
    func endArray() { buffer.append(UInt8(ascii: "]")); atContainerStart = false; flushIfFull() }

    /// Writes `"name":`; the value call that follows adds no comma.
    func key(_ name: StaticString) {
        separate()
        buffer.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { buffer.append(contentsOf: $0) }
        buffer.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        atContainerStart = true
    }

    /// A key chosen at run time (escaped like any string).
    func key(_ name: String) {
        string(name)
        buffer.append(UInt8(ascii: ":"))
        atContainerStart = true
    }

    // MARK: Values

    func string(_ value: String) {
        var value = value
        quoted { value.withUTF8 { appendEscaped($0) } }
    }

    /// A string from UTF-8 bytes; invalid sequences become U+FFFD.
    func string(utf8 bytes: [UInt8]) {
        quoted {
            bytes.withUnsafeBufferPointer { pointer in
                if UTF8Validation.isValid(pointer) {
                    appendEscapedInPieces(pointer)
                } else {
                    var repaired = String(decoding: pointer, as: UTF8.self)
                    repaired.withUTF8 { appendEscapedInPieces($0) }
                }
            }
        }
    }

    /// A string holding `bytes` in standard base64 (with padding), written in pieces.
    func base64String(_ bytes: [UInt8]) {
        quoted {
            let chunk = 48 * 1024  // a multiple of 3: no padding until the last piece
            var start = 0
            while start < bytes.count {
                let end = min(start + chunk, bytes.count)
                Base64.append(bytes[start..<end], to: &buffer)
                start = end
                flushIfFull()
            }
        }
    }

    private func quoted(_ appendContent: () -> Void) {
        separate()
        buffer.append(UInt8(ascii: "\""))
        appendContent()
        buffer.append(UInt8(ascii: "\""))
        flushIfFull()
    }

    func integer<Value: BinaryInteger>(_ value: Value) {
        separate()
        appendDecimal(Int64(clamping: value))
    }

    /// A millisecond figure with at most three decimals (microsecond precision), as HAR timings
    /// are written; `microseconds` is the exact value so sums of them stay exact in decimal.
    func milliseconds(microseconds: Int64) {
        separate()
        var value = microseconds
        if value < 0 {
            buffer.append(UInt8(ascii: "-"))
            value = value == .min ? .max : -value
        }
        appendDecimal(value / 1000)
        var fraction = value % 1000
        guard fraction != 0 else { return }
        buffer.append(UInt8(ascii: "."))
        var digits = 3
        while fraction % 10 == 0 { fraction /= 10; digits -= 1 }
        var divisor: Int64 = digits == 3 ? 100 : digits == 2 ? 10 : 1
        while divisor > 0 {
            buffer.append(UInt8(ascii: "0") + UInt8(fraction / divisor % 10))
            divisor /= 10
        }
    }

    /// A value rendered elsewhere (by another emitter), copied as it is.
    func rendered(_ bytes: [UInt8]) {
        separate()
        buffer.append(contentsOf: bytes)
        flushIfFull()
    }

    func bool(_ value: Bool) {
        separate()
        appendStatic(value ? "true" : "false")
    }

    /// A date as HAR writes it: `"2026-11-22T10:01:02.345Z"`.
    func date(_ date: Date) {
        separate()
        buffer.append(UInt8(ascii: "\""))
        ISO8601Milliseconds.append(date, to: &buffer)
        buffer.append(UInt8(ascii: "\""))
    }

    // MARK: Output

    /// Hands everything buffered to the output (which may buffer further).
    func drain() throws {
        try throwPendingError()
        guard !buffer.isEmpty else { return }
        try buffer.withUnsafeBytes { try output.write($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Set when a write during a value failed; the next `drain` reports it.
    private var pendingError: (any Error)?

    private func throwPendingError() throws {
        if let error = pendingError {
            pendingError = nil
            throw error
        }
    }

    private func flushIfFull() {
        guard buffer.count >= Self.flushThreshold, pendingError == nil else { return }
        do { try drain() } catch { pendingError = error }
    }

    private func appendStatic(_ text: StaticString) {
        text.withUTF8Buffer { buffer.append(contentsOf: $0) }
    }

    private func separate() {
        if atContainerStart {
            atContainerStart = false
        } else {
            buffer.append(UInt8(ascii: ","))
        }
    }

    private func appendDecimal(_ value: Int64) {
        if value < 0 {
            buffer.append(UInt8(ascii: "-"))
            appendDecimal(UInt64(value.magnitude))
        } else {
            appendDecimal(UInt64(value))
        }
    }

    private func appendDecimal(_ value: UInt64) {
        if value < 10 {
            buffer.append(UInt8(ascii: "0") + UInt8(value))
            return
        }
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        var count = 0
        var rest = value
        withUnsafeMutableBytes(of: &digits) { raw in
            while rest > 0 {
                raw[19 - count] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
                count += 1
            }
            buffer.append(contentsOf: raw[(20 - count)...])
        }
    }

    private func appendEscapedInPieces(_ bytes: UnsafeBufferPointer<UInt8>) {
        // Large bodies are escaped in slices so the buffer is drained along the way. A slice ends
        // on a character boundary: the escapes of C1 and bidi characters look at whole sequences.
        let piece = 32 * 1024
        var start = 0
        while start < bytes.count {
            var end = min(start + piece, bytes.count)
            var backed = 0
            while end < bytes.count, backed < 3, bytes[end] & 0xC0 == 0x80 {
                end -= 1
                backed += 1
            }
            appendEscaped(UnsafeBufferPointer(rebasing: bytes[start..<end]))
            start = end
            flushIfFull()
        }
    }

    /// Escapes valid UTF-8 with the terminal-safe policy (`JSONStringEscaper`): quote, backslash,
    /// controls, DEL, C1, bidi controls and U+2028/U+2029, so a HAR printed with `export --har -`
    /// or `cat` cannot drive the terminal. The JSON values are unchanged.
    private func appendEscaped(_ bytes: UnsafeBufferPointer<UInt8>) {
        JSONStringEscaper.appendEscaped(bytes, to: &buffer, policy: .terminalSafe)
    }
}
