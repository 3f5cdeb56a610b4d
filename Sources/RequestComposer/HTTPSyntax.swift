import ProxyModel

/// The few HTTP grammar checks both front ends share (RFC 9110): tokens for methods and header
/// names, one-line header values, and the framing headers the proxy always writes itself.
enum HTTPSyntax {
    static func isToken(_ text: some StringProtocol) -> Bool { HTTPGrammar.isToken(text) }

    static func isFieldValue(_ text: some StringProtocol) -> Bool { HTTPGrammar.isFieldValue(text) }

    /// How a refused control byte is named in a message.
    static func controlName(in text: some StringProtocol) -> String {
        for byte in text.utf8 where byte != 0x09 && (byte < 0x20 || byte == 0x7F) {
            switch byte {
            case 0x0D: return "a carriage return (CR)"
            case 0x0A: return "a line feed (LF)"
            case 0x00: return "a NUL byte"
            default: return "a control character"
            }
        }
        return "a control character"
    }

    /// `Content-Length` and `Transfer-Encoding`: the proxy frames the body, so these are dropped.
    static func isFraming(_ name: String) -> Bool {
        name.equalsIgnoringASCIICase("Content-Length") || name.equalsIgnoringASCIICase("Transfer-Encoding")
    }

    /// Leading and trailing spaces and tabs removed (they are not part of a field value).
    static func trimmed(_ text: Substring) -> String {
        var slice = text
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }

    /// Text for a message: long or odd input shortened so the message stays one short line.
    static func shown(_ text: some StringProtocol, limit: Int = 60) -> String {
        var result = ""
        var count = 0
        for scalar in text.unicodeScalars {
            if count == limit { return result + "…" }
            if TerminalText.isUnsafe(scalar) {
                result += scalar.value < 0x100 ? "\\x" + hex2(UInt8(scalar.value)) : "\\u{\(String(scalar.value, radix: 16))}"
            } else {
                result.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return result
    }

    private static func hex2(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count == 1 ? "0" + digits : digits
    }
}
