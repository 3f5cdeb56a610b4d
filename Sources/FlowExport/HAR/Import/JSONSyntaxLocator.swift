/// Finds the first JSON syntax error in a document and says where it is (line and column), for
/// files `JSONDecoder` refuses with only "The given data was not valid JSON".
///
/// A validator, not a parser: it keeps a stack of open containers and nothing else, so it runs
/// in flat memory over a file of any size and cannot recurse too deep.
enum JSONSyntaxLocator {
    /// "unexpected character '<' at line 1, column 1"; nil when the document is valid JSON.
    static func firstError(in bytes: [UInt8]) -> String? {
        var scanner = Scanner(bytes: bytes)
        return scanner.run()
    }

    /// Deeper nesting is refused (`JSONDecoder` refuses it too, without saying where).
    static let maximumDepth = 512

    private struct Scanner {
        let bytes: [UInt8]
        var position = 0
        /// `{` or `[` for each open container.
        var open: [UInt8] = []
        /// The innermost container was just opened and its first element is still to be read.
        var awaitingFirstElement = false

        /// One loop over the whole document: `value` only opens containers, the loop reads their
        /// elements, so nesting costs stack entries in `open`, never call frames.
        mutating func run() -> String? {
            skipSpace()
            if let error = value() { return error }
            while let container = open.last {
                skipSpace()
                if awaitingFirstElement {
                    awaitingFirstElement = false
                    if let error = element(of: container) { return error }
                    continue
                }
                guard position < bytes.count else { return endOfFile() }
                let closer: UInt8 = container == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                if bytes[position] == closer {
                    position += 1
                    open.removeLast()
                    continue
                }
                guard bytes[position] == UInt8(ascii: ",") else {
                    return unexpected(container == UInt8(ascii: "{") ? "',' or '}'" : "',' or ']'")
                }
                position += 1
                if let error = element(of: container) { return error }
            }
            skipSpace()
            return position < bytes.count ? unexpected("the end of the file") : nil
        }

        mutating func element(of container: UInt8) -> String? {
            container == UInt8(ascii: "{") ? member() : value()
        }

        /// A value; a container is only opened (its elements are read by `run`).
        mutating func value() -> String? {
            skipSpace()
            guard position < bytes.count else { return endOfFile() }
            switch bytes[position] {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let opener = bytes[position]
                guard open.count < JSONSyntaxLocator.maximumDepth else {
                    return "nesting deeper than \(JSONSyntaxLocator.maximumDepth) levels at \(location())"
                }
                position += 1
                skipSpace()
                let closer: UInt8 = opener == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                if position < bytes.count && bytes[position] == closer {
                    position += 1
                    return nil
                }
                open.append(opener)
                awaitingFirstElement = true
                return nil
            case UInt8(ascii: "\""): return string()
            case UInt8(ascii: "t"): return literal("true")
            case UInt8(ascii: "f"): return literal("false")
            case UInt8(ascii: "n"): return literal("null")
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            default: return unexpected("a value")
            }
        }

        /// `"name": value`
        mutating func member() -> String? {
            skipSpace()
            guard position < bytes.count else { return endOfFile() }
            guard bytes[position] == UInt8(ascii: "\"") else { return unexpected("a field name in double quotes") }
            if let error = string() { return error }
            skipSpace()
            guard position < bytes.count else { return endOfFile() }
            guard bytes[position] == UInt8(ascii: ":") else { return unexpected("':'") }
            position += 1
            return value()
        }

        mutating func string() -> String? {
            position += 1
            while position < bytes.count {
                let byte = bytes[position]
                switch byte {
                case UInt8(ascii: "\""):
                    position += 1
                    return nil
                case UInt8(ascii: "\\"):
                    if let error = escape() { return error }
                case 0..<0x20:
                    return "control character (byte \(byte)) inside a string at \(location())"
                default:
                    position += 1
                }
            }
            return endOfFile()
        }

        /// `\n`, `\u00e9`, or a surrogate pair `\ud83d\ude00`; a lone surrogate is an error
        /// (Foundation refuses it without saying where).
        mutating func escape() -> String? {
            let start = position
            position += 1
            guard position < bytes.count else { return endOfFile() }
            guard bytes[position] == UInt8(ascii: "u") else {
                guard Array("\"\\/bfnrt".utf8).contains(bytes[position]) else { return unexpected("an escape character") }
                position += 1
                return nil
            }
            switch unicodeEscape() {
            case .failure(let error): return error.message
            case .success(let unit) where (0xDC00...0xDFFF).contains(unit):
                return loneSurrogate(at: start)
            case .success(let unit) where (0xD800...0xDBFF).contains(unit):
                guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                      bytes[position + 1] == UInt8(ascii: "u")
                else { return loneSurrogate(at: start) }
                position += 1
                switch unicodeEscape() {
                case .failure(let error): return error.message
                case .success(let low): return (0xDC00...0xDFFF).contains(low) ? nil : loneSurrogate(at: start)
                }
            case .success: return nil
            }
        }

        /// The UTF-16 unit of `uXXXX` at `position` (which is left after it).
        mutating func unicodeEscape() -> Result<UInt16, EscapeError> {
            var unit: UInt16 = 0
            for _ in 0..<4 {
                position += 1
                guard position < bytes.count else { return .failure(EscapeError(endOfFile())) }
                guard let digit = bytes[position].hexValue else {
                    return .failure(EscapeError(unexpected("a hex digit of a \\u escape")))
                }
                unit = unit << 4 | UInt16(digit)
            }
            position += 1
            return .success(unit)
        }

        mutating func loneSurrogate(at start: Int) -> String {
            position = start
            return "invalid \\u escape (lone surrogate) at \(location())"
        }

        mutating func number() -> String? {
            let digits = UInt8(ascii: "0")...UInt8(ascii: "9")
            if bytes[position] == UInt8(ascii: "-") { position += 1 }
            guard position < bytes.count, digits.contains(bytes[position]) else { return unexpected("a digit") }
            let allowed = Set(Array("0123456789+-.eE".utf8))
            while position < bytes.count && allowed.contains(bytes[position]) { position += 1 }
            return nil
        }

        mutating func literal(_ word: String) -> String? {
            for expected in word.utf8 {
                guard position < bytes.count else { return endOfFile() }
                guard bytes[position] == expected else { return unexpected("'\(word)'") }
                position += 1
            }
            return nil
        }

        mutating func skipSpace() {
            while position < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[position]) { position += 1 }
        }

        func unexpected(_ expected: String) -> String {
            let byte = bytes[position]
            let shown = (0x21..<0x7F).contains(byte) ? "'\(Character(Unicode.Scalar(byte)))'" : "byte \(byte)"
            return "unexpected \(shown) at \(location()), expected \(expected)"
        }

        func endOfFile() -> String {
            "the file ends too early at \(location())\(open.isEmpty ? "" : ", inside an unclosed \(open.last == UInt8(ascii: "{") ? "object" : "array")")"
        }

        /// `line 3, column 7` (1-based; columns count bytes).
        func location() -> String {
            var line = 1
            var lineStart = 0
            for index in 0..<min(position, bytes.count) where bytes[index] == 0x0A {
                line += 1
                lineStart = index + 1
            }
            return "line \(line), column \(position - lineStart + 1)"
        }
    }
}

/// A syntax error found inside a `\u` escape, as `Result`'s failure.
private struct EscapeError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}

extension UInt8 {
    fileprivate var hexValue: UInt8? {
        switch self {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return self - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return self - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return self - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
