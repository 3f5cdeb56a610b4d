/// The curl options import understands, and how each is spelled: the one table that decides
/// what a word means, so an option is never half-supported.
///
/// Options that change the request are kept; options that change only curl's own behaviour
/// (`-s`, `-v`, `-L`, `-o FILE`, `--path-as-is`, …) are accepted and ignored, since the proxy
/// sends the request itself (so `-L` does not make it follow redirects). Every other option is
/// refused by name: importing a command that would not send what curl sends would mislead.
enum CurlOption: Equatable {
    case request, header, userAgent, referer, cookie, user, url
    case data(CurlDataKind)
    case compressed, insecure, get, head, http11, http2
    /// Accepted and ignored; `takesValue` for `-o FILE`.
    case ignored(takesValue: Bool)
    /// Refused with a message of its own (`--proxy`).
    case refused(String)

    var takesValue: Bool {
        switch self {
        case .request, .header, .userAgent, .referer, .cookie, .user, .url, .data: return true
        case .ignored(let takesValue): return takesValue
        case .compressed, .insecure, .get, .head, .http11, .http2, .refused: return false
        }
    }

    static let proxyMessage = "the request goes through ProxyApp; remove --proxy"

    static func short(_ letter: UInt8) -> CurlOption? {
        switch letter {
        case UInt8(ascii: "X"): return .request
        case UInt8(ascii: "H"): return .header
        case UInt8(ascii: "A"): return .userAgent
        case UInt8(ascii: "e"): return .referer
        case UInt8(ascii: "b"): return .cookie
        case UInt8(ascii: "u"): return .user
        case UInt8(ascii: "d"): return .data(.ascii)
        case UInt8(ascii: "k"): return .insecure
        case UInt8(ascii: "G"): return .get
        case UInt8(ascii: "I"): return .head
        case UInt8(ascii: "g"), UInt8(ascii: "L"), UInt8(ascii: "s"), UInt8(ascii: "S"), UInt8(ascii: "v"), UInt8(ascii: "i"):
            return .ignored(takesValue: false)
        case UInt8(ascii: "o"): return .ignored(takesValue: true)
        case UInt8(ascii: "x"): return .refused(proxyMessage)
        default: return nil
        }
    }

    static func long(_ name: Substring) -> CurlOption? {
        switch name {
        case "request": return .request
        case "header": return .header
        case "user-agent": return .userAgent
        case "referer": return .referer
        case "cookie": return .cookie
        case "user": return .user
        case "url": return .url
        case "data", "data-ascii": return .data(.ascii)
        case "data-raw": return .data(.raw)
        case "data-binary": return .data(.binary)
        case "data-urlencode": return .data(.urlencode)
        case "compressed": return .compressed
        case "insecure": return .insecure
        case "get": return .get
        case "head": return .head
        case "http1.1": return .http11
        case "http2", "http2-prior-knowledge": return .http2
        case "globoff", "location", "silent", "show-error", "verbose", "include", "path-as-is":
            return .ignored(takesValue: false)
        case "output": return .ignored(takesValue: true)
        case "proxy": return .refused(proxyMessage)
        default: return nil
        }
    }

    static func unsupported(_ spelled: String) -> String {
        "curl option \(HTTPSyntax.shown(spelled)) is not supported by import; remove it"
    }
}

/// One option as written, with its value when it takes one.
struct CurlArgument {
    var option: CurlOption
    /// `-H` or `--header`, for messages.
    var spelled: String
    var value: ShellWords.Word?
    var line: Int
}

/// Reads curl's arguments (the words after `curl`) into options and URLs: `-X POST`, `-XPOST`,
/// clustered flags (`-sSL`, `-sXPOST`), `--header V`, `--header=V`, and `--` before plain words.
struct CurlArgumentReader {
    private(set) var arguments: [CurlArgument] = []
    private(set) var urls: [ShellWords.Word] = []

    init(_ words: ArraySlice<ShellWords.Word>) throws(ComposeError) {
        var rest = words
        var optionsEnded = false
        while let word = rest.popFirst() {
            let bytes = word.bytes
            if optionsEnded || bytes.count < 2 || bytes[0] != UInt8(ascii: "-") {
                urls.append(word)
            } else if bytes == Array("--".utf8) {
                optionsEnded = true
            } else if bytes[1] == UInt8(ascii: "-") {
                try readLong(word, rest: &rest)
            } else {
                try readShort(word, rest: &rest)
            }
        }
    }

    private mutating func readLong(_ word: ShellWords.Word, rest: inout ArraySlice<ShellWords.Word>) throws(ComposeError) {
        let text = word.text.dropFirst(2)
        let name = text.prefix { $0 != "=" }
        let spelled = "--" + name
        guard let option = CurlOption.long(name) else {
            throw ComposeError(line: word.line, message: CurlOption.unsupported(spelled))
        }
        if case .refused(let message) = option { throw ComposeError(line: word.line, message: message) }
        var value: ShellWords.Word?
        if name.endIndex < text.endIndex {
            guard option.takesValue else {
                throw ComposeError(line: word.line, message: "curl option \(spelled) takes no value: remove the '=…' after it")
            }
            let offset = 2 + name.utf8.count + 1
            value = ShellWords.Word(bytes: Array(word.bytes[offset...]), line: word.line)
        } else if option.takesValue {
            value = try nextValue(spelled, word: word, rest: &rest)
        }
        arguments.append(CurlArgument(option: option, spelled: spelled, value: value, line: word.line))
    }

    private mutating func readShort(_ word: ShellWords.Word, rest: inout ArraySlice<ShellWords.Word>) throws(ComposeError) {
        var position = 1
        while position < word.bytes.count {
            let letter = word.bytes[position]
            let spelled = "-" + String(decoding: [letter], as: UTF8.self)
            guard let option = CurlOption.short(letter) else {
                throw ComposeError(line: word.line, message: CurlOption.unsupported(spelled))
            }
            if case .refused(let message) = option { throw ComposeError(line: word.line, message: message) }
            position += 1
            guard option.takesValue else {
                arguments.append(CurlArgument(option: option, spelled: spelled, value: nil, line: word.line))
                continue
            }
            let value = position < word.bytes.count
                ? ShellWords.Word(bytes: Array(word.bytes[position...]), line: word.line)
                : try nextValue(spelled, word: word, rest: &rest)
            arguments.append(CurlArgument(option: option, spelled: spelled, value: value, line: word.line))
            return
        }
    }

    private func nextValue(_ spelled: String, word: ShellWords.Word,
                           rest: inout ArraySlice<ShellWords.Word>) throws(ComposeError) -> ShellWords.Word {
        guard let value = rest.popFirst() else {
            throw ComposeError(line: word.line, message: "curl option \(spelled) needs a value after it, but the command ends there: add it or remove the option")
        }
        return value
    }
}
