import CQRencode
#if canImport(Glibc)
import Glibc
#endif

/// A QR code as a square of modules (true: dark), encoded by libqrencode, so a phone can open a
/// URL without typing it: the CA page of the address the proxy listens on.
///
/// Drawn two ways: `halfBlockLines` (Unicode half blocks, two module rows per text row) and
/// `QRCodePNG` (an image file); both with a light quiet zone around it.
public struct QRCode: Sendable, Equatable {
    /// Modules per side.
    public let size: Int
    /// Row after row, `size` × `size`.
    public let modules: [Bool]

    /// Why a text could not be encoded, in words.
    public struct EncodingError: Error, CustomStringConvertible, Equatable {
        public let description: String
    }

    /// Encodes `text` as bytes, error correction level M (15% of the code may be unreadable),
    /// the smallest version that holds it.
    public init(encoding text: String) throws(EncodingError) {
        guard !text.isEmpty else { throw EncodingError(description: "nothing to encode") }
        guard text.utf8.count <= 1_000 else {
            throw EncodingError(description: "\(text.utf8.count) bytes are too many for a QR code a phone reads from a screen")
        }
        guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else {
            throw EncodingError(description: "libqrencode could not encode the text (errno \(errno))")
        }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        size = width
        modules = (0..<(width * width)).map { code.pointee.data[$0] & 1 == 1 }
    }

    public init(size: Int, modules: [Bool]) {
        precondition(modules.count == size * size)
        self.size = size
        self.modules = modules
    }

    public func isDark(row: Int, column: Int) -> Bool {
        guard row >= 0, column >= 0, row < size, column < size else { return false }
        return modules[row * size + column]
    }

    /// The code with `quietZone` light modules around it, two module rows per line: `▀`, `▄`,
    /// `█` and space, meant to be drawn dark on light: callers set black on bright white, since a
    /// terminal's own colours may be light on dark, which scanners do not read.
    public func halfBlockLines(quietZone: Int = 2) -> [String] {
        let span = size + 2 * quietZone
        var lines: [String] = []
        var row = -quietZone
        while row < size + quietZone {
            var line = ""
            line.reserveCapacity(span * 3)
            for column in -quietZone..<(size + quietZone) {
                let top = isDark(row: row, column: column)
                let bottom = row + 1 < size + quietZone && isDark(row: row + 1, column: column)
                line += top ? (bottom ? "█" : "▀") : (bottom ? "▄" : " ")
            }
            lines.append(line)
            row += 2
        }
        return lines
    }
}
