import Foundation

/// The lines of a body in one view mode, produced one at a time.
///
/// A body can be 16 MiB: building every line up front would stall the UI when a flow opens, so
/// only what lines exist is known in advance (a byte scan for text, arithmetic for hex) and
/// `line(_:)` makes the string of a line when the renderer asks for it.
public struct BodyLines: Sendable {
    enum Storage: Sendable {
        case text(TextLineIndex)
        case hex(HexLines)
        case list([String])
    }

    let storage: Storage

    init(_ storage: Storage) {
        self.storage = storage
    }

    static let empty = BodyLines(.list([]))

    public var count: Int {
        switch storage {
        case .text(let index): index.count
        case .hex(let hex): hex.count
        case .list(let lines): lines.count
        }
    }

    /// The line at `index` (0-based); empty outside `0..<count`.
    public func line(_ index: Int) -> String {
        guard index >= 0, index < count else { return "" }
        switch storage {
        case .text(let text): return text.line(index)
        case .hex(let hex): return hex.line(index)
        case .list(let lines): return lines[index]
        }
    }
}

/// Where each line of a UTF-8 text starts, found by one scan; a line's string is made on demand.
///
/// Lines end at `\n` (a `\r` before it is dropped). A line longer than `maxLineBytes` is cut
/// into several (at a UTF-8 character boundary): a minified 10 MiB script is one "line", and
/// making a 10 MiB string for every frame would be slow while showing nothing more.
final class TextLineIndex: Sendable {
    static let maxLineBytes = 16 * 1024

    let bytes: [UInt8]
    /// The start of every line; a line ends where the next starts (newline stripped).
    private let starts: [UInt32]

    init(_ bytes: [UInt8], maxLineBytes: Int = TextLineIndex.maxLineBytes) {
        self.bytes = bytes
        var starts: [UInt32] = []
        bytes.withUnsafeBufferPointer { buffer in
            let total = buffer.count
            var start = 0
            while start < total {
                let newline = Self.newline(in: buffer, from: start)
                var chunk = start
                while newline - chunk > maxLineBytes {
                    starts.append(UInt32(chunk))
                    var cut = chunk + maxLineBytes
                    // Never cut inside a UTF-8 sequence: back up over continuation bytes.
                    while cut > chunk + 1, buffer[cut] & 0xC0 == 0x80 { cut -= 1 }
                    chunk = cut
                }
                starts.append(UInt32(chunk))
                start = newline + 1
            }
        }
        self.starts = starts
    }

    var count: Int { starts.count }

    /// The index of the next `\n` at or after `start`, or the end: memchr, fast even in debug builds.
    private static func newline(in buffer: UnsafeBufferPointer<UInt8>, from start: Int) -> Int {
        guard let base = buffer.baseAddress, start < buffer.count,
              let found = memchr(base + start, 0x0A, buffer.count - start)
        else { return buffer.count }
        return base.distance(to: found.assumingMemoryBound(to: UInt8.self))
    }

    func line(_ index: Int) -> String {
        let start = Int(starts[index])
        var end = index + 1 < starts.count ? Int(starts[index + 1]) : bytes.count
        if end > start, bytes[end - 1] == UInt8(ascii: "\n") {
            end -= 1
            if end > start, bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        }
        let text = String(decoding: bytes[start..<end], as: UTF8.self)
        return text.utf8.contains(UInt8(ascii: "\t")) ? Self.expandingTabs(text) : text
    }

    /// Tabs become spaces up to the next multiple of 4 columns.
    static func expandingTabs(_ text: String) -> String {
        var result = ""
        var column = 0
        for character in text {
            if character == "\t" {
                let spaces = 4 - column % 4
                result.append(String(repeating: " ", count: spaces))
                column += spaces
            } else {
                result.append(character)
                column += DisplayWidth.of(character)
            }
        }
        return result
    }
}

/// A hex dump in `hexdump -C` layout, 16 bytes a line, every line computed by arithmetic:
/// `00000010  48 65 6c 6c 6f 20 77 6f  72 6c 64 0a 00 01 02 03  |Hello world.....|`.
struct HexLines: Sendable {
    static let bytesPerLine = 16
    let bytes: [UInt8]

    var count: Int { (bytes.count + Self.bytesPerLine - 1) / Self.bytesPerLine }

    func line(_ index: Int) -> String {
        let start = index * Self.bytesPerLine
        let end = min(bytes.count, start + Self.bytesPerLine)
        var hex = ""
        var ascii = ""
        for position in 0..<Self.bytesPerLine {
            if position == 8 { hex.append(" ") }
            if start + position < end {
                let byte = bytes[start + position]
                hex.append(Self.hexByte(byte))
                hex.append(" ")
                ascii.append((0x20..<0x7F).contains(byte) ? Character(Unicode.Scalar(byte)) : ".")
            } else {
                hex.append("   ")
            }
        }
        return "\(Self.offset(start))  \(hex) |\(ascii)|"
    }

    private static let digits = Array("0123456789abcdef")

    private static func hexByte(_ byte: UInt8) -> String {
        String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }

    /// At least 8 hex digits, more for bodies past 4 GiB.
    private static func offset(_ value: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 8 - text.count)) + text
    }
}
