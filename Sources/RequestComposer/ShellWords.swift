/// Splits a pasted command line into words the way a POSIX shell (bash) would, without running
/// anything, so a curl command can be read exactly as the shell would have passed it to curl.
///
/// Understood: blanks, `'…'`, `"…"` (with `\` before `$`, `` ` ``, `"`, `\` and a newline),
/// `$'…'` (ANSI-C escapes, as Chrome writes bodies), `\x` outside quotes, backslash-newline
/// continuations (also `\` CR LF from a Windows clipboard), `#` comments, `;`, `|` and newlines
/// between commands. Two expansions are understood because our own export (`CurlCommand`) writes
/// them, and only in that form: `"$proxyapp_nl"` after the command's fixed definition of it, and
/// `"$(printf '\NNN…')"` (octal bytes). Every other expansion, substitution, redirection or
/// background `&` is refused with its line: the text is data, never run. One pass, linear time.
struct ShellWords {
    /// One word and the line (from 1) where it starts.
    struct Word {
        var bytes: [UInt8]
        var line: Int
        var text: String { String(decoding: bytes, as: UTF8.self) }
    }

    enum Token {
        case word(Word)
        /// `|`
        case pipe(line: Int)
        /// `;` or a newline: the end of a command.
        case end(line: Int)
    }

    /// What `CurlCommand.newlineDefinition` writes before a command whose arguments hold a LF.
    static let newlineDefinition = Array(#"proxyapp_nl="$(printf '\012.')"; proxyapp_nl="${proxyapp_nl%.}";"#.utf8)

    private let input: [UInt8]
    private var index = 0
    private var line = 1
    private var newlineDefined = false
    private var hasWords = false
    private(set) var tokens: [Token] = []

    /// Splits `text`; throws the first thing a shell would not take or we would not run.
    static func split(_ text: String) throws(ComposeError) -> [Token] {
        var words = ShellWords(input: Array(text.utf8))
        try words.run()
        return words.tokens
    }

    private init(input: [UInt8]) {
        self.input = input
    }

    private func peek(_ offset: Int = 0) -> UInt8? {
        index + offset < input.count ? input[index + offset] : nil
    }

    private func fail(_ message: String, line: Int? = nil) -> ComposeError {
        ComposeError(line: line ?? self.line, message: message)
    }

    private mutating func run() throws(ComposeError) {
        if let nul = input.firstIndex(of: 0) {
            let nulLine = 1 + input[..<nul].reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            throw fail("the command line holds a NUL byte, which no shell can pass to curl: remove it", line: nulLine)
        }
        while let byte = peek() {
            switch byte {
            case 0x20, 0x09:
                index += 1
            case 0x0D where peek(1) == 0x0A:
                index += 1
            case 0x0D:
                throw fail("the command line holds a carriage return outside quotes: save it with plain line ends")
            case 0x0A:
                tokens.append(.end(line: line))
                index += 1
                line += 1
            case UInt8(ascii: "\\") where isContinuation(at: index):
                skipContinuation()
            case UInt8(ascii: "#"):
                while let next = peek(), next != 0x0A { index += 1 }
            case UInt8(ascii: ";"):
                tokens.append(.end(line: line))
                index += 1
            case UInt8(ascii: "|"):
                if peek(1) == UInt8(ascii: "|") { throw fail("'||' between commands is not supported: import one curl command") }
                tokens.append(.pipe(line: line))
                index += 1
            case UInt8(ascii: "&"):
                throw fail("'&' (background or '&&') is not supported: import one curl command, and quote a URL that holds '&'")
            case UInt8(ascii: "<"), UInt8(ascii: ">"):
                throw fail("shell redirections ('<', '>') are not supported: remove them (use -o for output)")
            case UInt8(ascii: "("), UInt8(ascii: ")"):
                throw fail("parentheses (subshells) are not supported: import one plain curl command")
            default:
                if !hasWords, startsWithNewlineDefinition() {
                    index += Self.newlineDefinition.count
                    newlineDefined = true
                } else {
                    let start = line
                    let bytes = try readWord()
                    tokens.append(.word(Word(bytes: bytes, line: start)))
                    hasWords = true
                }
            }
        }
    }

    private func startsWithNewlineDefinition() -> Bool {
        input.count - index >= Self.newlineDefinition.count
            && input[index..<index + Self.newlineDefinition.count].elementsEqual(Self.newlineDefinition)
    }

    /// `\` then LF, or `\` then CR LF.
    private func isContinuation(at position: Int) -> Bool {
        guard position + 1 < input.count else { return false }
        return input[position + 1] == 0x0A || (input[position + 1] == 0x0D && position + 2 < input.count && input[position + 2] == 0x0A)
    }

    private mutating func skipContinuation() {
        index += input[index + 1] == 0x0D ? 3 : 2
        line += 1
    }

    private mutating func readWord() throws(ComposeError) -> [UInt8] {
        var word: [UInt8] = []
        while let byte = peek() {
            switch byte {
            case 0x20, 0x09, 0x0A, UInt8(ascii: ";"), UInt8(ascii: "|"), UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"),
                 UInt8(ascii: "("), UInt8(ascii: ")"):
                return word
            case 0x0D where peek(1) == 0x0A:
                return word
            case UInt8(ascii: "'"):
                try readSingleQuoted(into: &word)
            case UInt8(ascii: "\""):
                try readDoubleQuoted(into: &word)
            case UInt8(ascii: "`"):
                throw fail("backquote command substitution is not supported: write the value itself")
            case UInt8(ascii: "$"):
                switch peek(1) {
                case UInt8(ascii: "'"):
                    index += 2
                    try AnsiCQuoting.read(input, at: &index, line: &line, into: &word)
                case UInt8(ascii: "\""):
                    index += 1
                case let next? where isExpansionStart(next):
                    throw fail("shell expansion '$\(Character(Unicode.Scalar(next)))…' is not supported: write the value itself")
                default:
                    word.append(byte)
                    index += 1
                }
            case UInt8(ascii: "\\"):
                if isContinuation(at: index) {
                    skipContinuation()
                } else if let next = peek(1) {
                    word.append(next)
                    index += 2
                } else {
                    throw fail("the command line ends with a lone backslash: remove it or add the rest of the line")
                }
            default:
                word.append(byte)
                index += 1
            }
        }
        return word
    }

    /// What bash would expand after `$`: a name, a digit, `{`, `(` or a special parameter.
    private func isExpansionStart(_ byte: UInt8) -> Bool {
        isNameByte(byte) || "{(?#$!@*-".utf8.contains(byte)
    }

    private mutating func readSingleQuoted(into word: inout [UInt8]) throws(ComposeError) {
        let start = line
        index += 1
        guard let close = input[index...].firstIndex(of: UInt8(ascii: "'")) else {
            throw fail("a ' quote opened here is never closed: add the closing '", line: start)
        }
        for byte in input[index..<close] where byte == 0x0A { line += 1 }
        word += input[index..<close]
        index = close + 1
    }

    private mutating func readDoubleQuoted(into word: inout [UInt8]) throws(ComposeError) {
        let start = line
        index += 1
        while let byte = peek() {
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                return
            case UInt8(ascii: "\\"):
                if isContinuation(at: index) {
                    skipContinuation()
                } else if let next = peek(1), "$`\"\\".utf8.contains(next) {
                    word.append(next)
                    index += 2
                } else {
                    word.append(byte)
                    index += 1
                }
            case UInt8(ascii: "`"):
                throw fail("backquote command substitution is not supported: write the value itself")
            case UInt8(ascii: "$"):
                try readDollarInDoubleQuotes(into: &word)
            default:
                if byte == 0x0A { line += 1 }
                word.append(byte)
                index += 1
            }
        }
        throw fail("a \" quote opened here is never closed: add the closing \"", line: start)
    }

    /// `$proxyapp_nl`, `${proxyapp_nl}` (once defined) and `$(printf '\NNN…')`; a `$` before
    /// anything that does not start an expansion is itself.
    private mutating func readDollarInDoubleQuotes(into word: inout [UInt8]) throws(ComposeError) {
        let rest = input[(index + 1)...]
        for form in ["proxyapp_nl", "{proxyapp_nl}"] where newlineDefined && rest.starts(with: form.utf8) {
            let after = index + 1 + form.utf8.count
            if form.hasPrefix("{") || after >= input.count || !isNameByte(input[after]) {
                word.append(0x0A)
                index = after
                return
            }
        }
        if rest.starts(with: "(printf '".utf8) {
            index += 1 + "(printf '".utf8.count
            try readPrintfOctal(into: &word)
            return
        }
        if let next = peek(1), isExpansionStart(next) {
            throw fail("shell expansion '$\(Character(Unicode.Scalar(next)))…' is not supported: write the value itself")
        }
        word.append(UInt8(ascii: "$"))
        index += 1
    }

    private func isNameByte(_ byte: UInt8) -> Bool {
        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || byte == UInt8(ascii: "_")
    }

    /// The inside of `$(printf '…')` as our export writes it: octal escapes and plain characters.
    private mutating func readPrintfOctal(into word: inout [UInt8]) throws(ComposeError) {
        let unsupported = fail("command substitution is supported only as $(printf '\\NNN') with octal escapes: write the value itself")
        while let byte = peek() {
            switch byte {
            case UInt8(ascii: "'"):
                guard peek(1) == UInt8(ascii: ")") else { throw unsupported }
                index += 2
                return
            case UInt8(ascii: "\\"):
                var value = 0
                var digits = 0
                while digits < 3, let digit = peek(1 + digits), (0x30...0x37).contains(digit) {
                    value = value * 8 + Int(digit - 0x30)
                    digits += 1
                }
                guard digits > 0, value > 0, value < 256 else { throw unsupported }
                word.append(UInt8(value))
                index += 1 + digits
            case UInt8(ascii: "%"), 0x0A:
                throw unsupported
            default:
                word.append(byte)
                index += 1
            }
        }
        throw unsupported
    }
}
