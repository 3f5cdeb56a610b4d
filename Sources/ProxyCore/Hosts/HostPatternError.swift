/// Why a host pattern was refused, as one line that quotes the pattern, names the problem and
/// says what to write instead: it is shown as it is by the CLI and the rules loader.
public struct HostPatternError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The whole message, e.g. `host pattern 'example.com:443' has a port: …`.
    public let message: String

    init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}

// Every message, in one place so their wording stays consistent.
extension HostPatternError {
    static let empty = HostPatternError(
        "host pattern is empty: write a host such as 'example.com' or '*.example.com', or '*' for every host")

    static func url(_ pattern: String, host: String?) -> HostPatternError {
        let fix = host.map { "write only the host, \(quoted($0))" } ?? "write only its host, such as 'example.com'"
        return HostPatternError("host pattern \(quoted(pattern)) is a URL: \(fix)")
    }

    static func path(_ pattern: String, host: String) -> HostPatternError {
        HostPatternError("host pattern \(quoted(pattern)) has a path: write only the host, \(quoted(host)) (host patterns do not match paths)")
    }

    static func whitespace(_ pattern: String, _ scalar: Unicode.Scalar) -> HostPatternError {
        let name: String
        switch scalar {
        case " ": name = "a space"
        case "\t": name = "a tab"
        case "\n", "\r", "\u{85}", "\u{2028}", "\u{2029}": name = "a line break"
        default: name = "whitespace (\(codePoint(scalar)))"
        }
        return HostPatternError("host pattern \(quoted(pattern)) contains \(name): remove it (one host per pattern, no spaces)")
    }

    static func character(_ pattern: String, _ scalar: Unicode.Scalar) -> HostPatternError {
        HostPatternError("host pattern \(quoted(pattern)) contains \(describe(scalar)): use only letters, digits, '-', '_', '.' and the wildcards '*' and '?'")
    }

    static func port(_ pattern: String, host: String) -> HostPatternError {
        HostPatternError("host pattern \(quoted(pattern)) has a port: host patterns take no port; write \(quoted(host)) and put the port in the rule's 'port:' key")
    }

    static func misplacedBracket(_ pattern: String) -> HostPatternError {
        HostPatternError("host pattern \(quoted(pattern)) has '[' or ']' out of place: brackets may only enclose a whole IPv6 address, such as '[::1]'; remove them")
    }

    static func bracketedNotIPv6(_ pattern: String) -> HostPatternError {
        HostPatternError("host pattern \(quoted(pattern)) is bracketed but is not an IPv6 address: brackets are only for IPv6 literals such as '[::1]'; write names and IPv4 addresses without them")
    }

    static func colonNotIPv6(_ pattern: String) -> HostPatternError {
        HostPatternError("host pattern \(quoted(pattern)) contains ':' but is not an IPv6 address: write a complete IPv6 address such as '2001:db8::1' (host patterns take no port)")
    }

    static func wildcardInIPv6(_ pattern: String) -> HostPatternError {
        HostPatternError("host pattern \(quoted(pattern)) puts a wildcard in an IPv6 address: IPv6 addresses match only exactly; write the whole address")
    }

    static func noName(_ pattern: String) -> HostPatternError {
        HostPatternError("host pattern \(quoted(pattern)) has no name, only dots: write a host such as 'example.com', or '*' for every host")
    }

    static func leadingDot(_ pattern: String) -> HostPatternError {
        let rest = String(pattern.unicodeScalars.dropFirst())
        return HostPatternError("host pattern \(quoted(pattern)) starts with a dot: write \(quoted("*." + rest)) for its subdomains, or \(quoted(rest)) for the host itself")
    }

    static func emptyLabel(_ pattern: String) -> HostPatternError {
        HostPatternError("host pattern \(quoted(pattern)) has an empty label (two dots in a row): remove the extra dot")
    }

    static func wildcardInUnicodeLabel(_ pattern: String, label: String) -> HostPatternError {
        HostPatternError("host pattern \(quoted(pattern)) has a wildcard in the non-ASCII label \(quoted(label)): write that label in its punycode 'xn--' form to put a wildcard in it")
    }

    static func labelTooLong(_ pattern: String, label: String) -> HostPatternError {
        HostPatternError("host pattern \(quoted(pattern)) has a label of \(label.utf8.count) bytes (\(quoted(label)) after normalization): a DNS label holds at most 63 bytes; shorten it")
    }

    static func nameTooLong(_ pattern: String, bytes: Int) -> HostPatternError {
        HostPatternError("host pattern \(quoted(pattern)) is \(bytes) bytes long after normalization: a host name holds at most 253 bytes; shorten it")
    }

    // MARK: - Text helpers

    /// `text` in single quotes, with line breaks, tabs and other invisible control characters
    /// escaped so that the message stays on one line.
    static func quoted(_ text: String) -> String {
        var result = "'"
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            default:
                if isInvisible(scalar) {
                    result += "\\u{\(hex(scalar.value))}"
                } else {
                    result.unicodeScalars.append(scalar)
                }
            }
        }
        return result + "'"
    }

    /// A character for a message: `'$'`, `'€' (U+20AC)` for non-ASCII (look-alikes exist),
    /// or only `U+0007` for one that cannot be seen.
    static func describe(_ scalar: Unicode.Scalar) -> String {
        if isInvisible(scalar) { return codePoint(scalar) }
        if scalar.isASCII { return "'\(scalar)'" }
        return "'\(scalar)' (\(codePoint(scalar)))"
    }

    private static func isInvisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .surrogate, .privateUse:
            return true
        default:
            return false
        }
    }

    private static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let digits = hex(scalar.value)
        return "U+" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    private static func hex(_ value: UInt32) -> String {
        String(value, radix: 16, uppercase: true)
    }
}
