/// Turns the text of a host pattern into its `HostPattern.Kind`, or refuses it with a message
/// that says what to write instead.
///
/// The checks run from the most to the least recognisable mistake (a URL before the `:` it
/// contains, a port before "not an IPv6 address"), so that the message names what the person
/// most likely meant. Non-ASCII characters are accepted when they are letters, combining marks
/// (scripts such as Devanagari need them) or decimal digits: they end up in `xn--` labels.
enum HostPatternParser {
    static let maximumNameLength = 253
    static let maximumLabelLength = 63

    static func kind(of pattern: String) throws(HostPatternError) -> HostPattern.Kind {
        guard !pattern.isEmpty else { throw .empty }
        let scalars = Array(pattern.unicodeScalars)
        if let schemeEnd = firstIndex(of: "://", in: scalars) {
            throw .url(pattern, host: urlHost(scalars[(schemeEnd + 3)...]))
        }
        if let space = scalars.first(where: { $0.properties.isWhitespace }) {
            throw .whitespace(pattern, space)
        }
        if let slash = scalars.firstIndex(of: "/"), slash > 0 {
            throw .path(pattern, host: text(scalars[..<slash]))
        }
        if let forbidden = scalars.first(where: { !isAllowed($0) }) {
            throw .character(pattern, forbidden)
        }
        if scalars.contains("[") || scalars.contains("]") {
            return try bracketed(pattern, scalars)
        }
        if scalars.contains(":") {
            return try withColon(pattern, scalars)
        }
        return try name(pattern, scalars)
    }

    // MARK: - IP literals

    /// `[IPv6]`, or `[IPv6]:port` (refused with the port message).
    private static func bracketed(_ pattern: String, _ scalars: [Unicode.Scalar]) throws(HostPatternError) -> HostPattern.Kind {
        guard scalars.first == "[", let close = scalars.firstIndex(of: "]"),
              scalars.count(where: { $0 == "[" }) == 1, scalars.count(where: { $0 == "]" }) == 1
        else { throw .misplacedBracket(pattern) }
        let after = scalars[(close + 1)...]
        if !after.isEmpty {
            if after.first == ":", after.dropFirst().allSatisfy(isASCIIDigit) {
                throw .port(pattern, host: text(scalars[...close]))
            }
            throw .misplacedBracket(pattern)
        }
        let inner = scalars[1..<close]
        if inner.contains(":"), inner.contains(where: isWildcard) { throw .wildcardInIPv6(pattern) }
        guard let address = IPAddressText.canonicalIPv6(text(inner)) else { throw .bracketedNotIPv6(pattern) }
        return .exact(address)
    }

    /// An unbracketed IPv6 address, or `name:port` (refused with the port message).
    private static func withColon(_ pattern: String, _ scalars: [Unicode.Scalar]) throws(HostPatternError) -> HostPattern.Kind {
        if let address = IPAddressText.canonicalIPv6(pattern) { return .exact(address) }
        if scalars.count(where: { $0 == ":" }) == 1, let colon = scalars.firstIndex(of: ":"), colon > 0,
           scalars[(colon + 1)...].allSatisfy(isASCIIDigit) {
            throw .port(pattern, host: text(scalars[..<colon]))
        }
        if scalars.contains(where: isWildcard) { throw .wildcardInIPv6(pattern) }
        throw .colonNotIPv6(pattern)
    }

    // MARK: - Names and wildcards

    private static func name(_ pattern: String, _ scalars: [Unicode.Scalar]) throws(HostPatternError) -> HostPattern.Kind {
        var body = scalars[...]
        if body.last == "." { body = body.dropLast() }
        if body.allSatisfy({ $0 == "." }) { throw .noName(pattern) }
        let labels = body.split(separator: ".", omittingEmptySubsequences: false)
        if labels.dropFirst().contains(where: \.isEmpty) { throw .emptyLabel(pattern) }
        if labels[0].isEmpty { throw .leadingDot(pattern) }
        for label in labels where !label.allSatisfy(\.isASCII) && label.contains(where: isWildcard) {
            throw .wildcardInUnicodeLabel(pattern, label: text(label))
        }

        let normalized = HostName.normalized(text(body))
        for label in normalized.utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        where label.count > maximumLabelLength {
            throw .labelTooLong(pattern, label: String(Substring(label)))
        }
        if normalized.utf8.count > maximumNameLength {
            throw .nameTooLong(pattern, bytes: normalized.utf8.count)
        }
        return classify(normalized)
    }

    /// The kind of a valid, normalized name pattern.
    static func classify(_ normalized: String) -> HostPattern.Kind {
        let bytes = normalized.utf8
        let isWildcardByte = { (byte: UInt8) in byte == UInt8(ascii: "*") || byte == UInt8(ascii: "?") }
        if normalized == "*" { return .any }
        guard bytes.contains(where: isWildcardByte) else { return .exact(normalized) }
        if bytes.starts(with: "*.".utf8), !bytes.dropFirst(2).contains(where: isWildcardByte) {
            return .subdomains(of: String(Substring(bytes.dropFirst(2))))
        }
        return .glob(normalized)
    }

    // MARK: - Characters

    private static func isAllowed(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar {
        case "a"..."z", "A"..."Z", "0"..."9", "-", "_", ".", "*", "?", ":", "[", "]":
            return true
        default:
            guard !scalar.isASCII else { return false }
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                 .nonspacingMark, .spacingMark, .decimalNumber:
                return true
            default:
                return false
            }
        }
    }

    private static func isWildcard(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "*" || scalar == "?"
    }

    private static func isASCIIDigit(_ scalar: Unicode.Scalar) -> Bool {
        scalar >= "0" && scalar <= "9"
    }

    // MARK: - URLs

    /// The host of a URL's authority (after `scheme://`): up to `/`, `?` or `#`, without
    /// `userinfo@` and `:port`. Nil when nothing is left.
    private static func urlHost(_ afterScheme: ArraySlice<Unicode.Scalar>) -> String? {
        var authority = afterScheme.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@") { authority = authority[(at + 1)...] }
        if authority.first == "[", let close = authority.firstIndex(of: "]") {
            authority = authority[...close]
        } else if let colon = authority.firstIndex(of: ":") {
            authority = authority[..<colon]
        }
        return authority.isEmpty ? nil : text(authority)
    }

    private static func firstIndex(of needle: String, in scalars: [Unicode.Scalar]) -> Int? {
        let needleScalars = Array(needle.unicodeScalars)
        guard scalars.count >= needleScalars.count else { return nil }
        for start in 0...(scalars.count - needleScalars.count)
        where scalars[start..<(start + needleScalars.count)].elementsEqual(needleScalars) {
            return start
        }
        return nil
    }

    private static func text(_ scalars: some Sequence<Unicode.Scalar>) -> String {
        var view = String.UnicodeScalarView()
        view.append(contentsOf: scalars)
        return String(view)
    }
}
