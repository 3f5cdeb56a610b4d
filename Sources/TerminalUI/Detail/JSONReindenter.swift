/// Pretty-prints JSON at the token level: 2-space indent, one member or element a line, `{}`
/// and `[]` kept on one line.
///
/// Our own rather than `JSONSerialization` round-tripping: a debugging proxy must show what was
/// sent, so key order, duplicate keys, number spelling (`1e-7`, `1.50`, 20-digit ids) and string
/// escapes are copied byte for byte; only whitespace between tokens changes. It also validates:
/// anything that is not exactly one JSON value (surrounding whitespace allowed) gives nil, and
/// the caller shows the body as text. Iterative, so deep nesting cannot overflow the stack.
enum JSONReindenter {
    /// What the scanner may see next.
    private enum Expect {
        case value, valueOrClose, key, keyOrClose, colon, commaOrClose, end
    }

    static func reindent(_ input: [UInt8]) -> [UInt8]? {
        var output: [UInt8] = []
        output.reserveCapacity(input.count + input.count / 4)
        var containers: [UInt8] = []  // `{` or `[` per open level
        var expect = Expect.value
        var index = 0
        let count = input.count

        func newline() {
            output.append(UInt8(ascii: "\n"))
            output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: containers.count * 2))
        }
        /// A value ended: what may follow depends on whether we are inside a container.
        func afterValue() -> Expect { containers.isEmpty ? .end : .commaOrClose }

        while index < count {
            let byte = input[index]
            if byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09 {
                index += 1
                continue
            }
            switch expect {
            case .end:
                return nil
            case .colon:
                guard byte == UInt8(ascii: ":") else { return nil }
                output.append(contentsOf: [UInt8(ascii: ":"), UInt8(ascii: " ")])
                index += 1
                expect = .value
            case .commaOrClose:
                if byte == UInt8(ascii: ",") {
                    output.append(byte)
                    newline()
                    index += 1
                    expect = containers.last == UInt8(ascii: "{") ? .key : .value
                } else if let open = containers.last, byte == closer(of: open) {
                    containers.removeLast()
                    newline()
                    output.append(byte)
                    index += 1
                    expect = afterValue()
                } else {
                    return nil
                }
            case .key, .keyOrClose:
                if expect == .keyOrClose, byte == UInt8(ascii: "}") {
                    containers.removeLast()
                    output.append(byte)
                    index += 1
                    expect = afterValue()
                    continue
                }
                guard byte == UInt8(ascii: "\"") else { return nil }
                if expect == .keyOrClose { newline() }
                guard let end = stringEnd(input, from: index) else { return nil }
                output.append(contentsOf: input[index..<end])
                index = end
                expect = .colon
            case .value, .valueOrClose:
                if expect == .valueOrClose, byte == UInt8(ascii: "]") {
                    containers.removeLast()
                    output.append(byte)
                    index += 1
                    expect = afterValue()
                    continue
                }
                if expect == .valueOrClose { newline() }
                switch byte {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    output.append(byte)
                    containers.append(byte)
                    index += 1
                    expect = byte == UInt8(ascii: "{") ? .keyOrClose : .valueOrClose
                    continue
                case UInt8(ascii: "\""):
                    guard let end = stringEnd(input, from: index) else { return nil }
                    output.append(contentsOf: input[index..<end])
                    index = end
                case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                    guard let end = literalEnd(input, from: index) else { return nil }
                    output.append(contentsOf: input[index..<end])
                    index = end
                default:
                    guard let end = numberEnd(input, from: index) else { return nil }
                    output.append(contentsOf: input[index..<end])
                    index = end
                }
                expect = afterValue()
            }
        }
        return expect == .end ? output : nil
    }

    private static func closer(of open: UInt8) -> UInt8 {
        open == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
    }

    /// The index after the string starting with `"` at `start`; nil for a raw control character,
    /// a bad escape or no closing quote.
    static func stringEnd(_ input: [UInt8], from start: Int) -> Int? {
        var index = start + 1
        while index < input.count {
            let byte = input[index]
            switch byte {
            case UInt8(ascii: "\""):
                return index + 1
            case UInt8(ascii: "\\"):
                guard index + 1 < input.count else { return nil }
                let escaped = input[index + 1]
                if escaped == UInt8(ascii: "u") {
                    guard index + 5 < input.count, input[(index + 2)...(index + 5)].allSatisfy(isHexDigit) else { return nil }
                    index += 6
                } else {
                    guard "\"\\/bfnrt".utf8.contains(escaped) else { return nil }
                    index += 2
                }
            case 0..<0x20:
                return nil
            default:
                index += 1
            }
        }
        return nil
    }

    /// The index after `true`, `false` or `null` at `start`.
    static func literalEnd(_ input: [UInt8], from start: Int) -> Int? {
        for literal in ["true", "false", "null"] {
            let bytes = Array(literal.utf8)
            let end = start + bytes.count
            if end <= input.count, input[start..<end].elementsEqual(bytes) { return end }
        }
        return nil
    }

    /// The index after the number at `start`: `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`.
    static func numberEnd(_ input: [UInt8], from start: Int) -> Int? {
        var index = start
        func digits() -> Int {
            let first = index
            while index < input.count, isDigit(input[index]) { index += 1 }
            return index - first
        }
        if index < input.count, input[index] == UInt8(ascii: "-") { index += 1 }
        guard index < input.count else { return nil }
        if input[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits() == 0 {
            return nil
        }
        if index < input.count, input[index] == UInt8(ascii: ".") {
            index += 1
            guard digits() > 0 else { return nil }
        }
        if index < input.count, input[index] == UInt8(ascii: "e") || input[index] == UInt8(ascii: "E") {
            index += 1
            if index < input.count, input[index] == UInt8(ascii: "+") || input[index] == UInt8(ascii: "-") { index += 1 }
            guard digits() > 0 else { return nil }
        }
        return index
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (byte | 0x20 >= UInt8(ascii: "a") && byte | 0x20 <= UInt8(ascii: "f"))
    }
}
