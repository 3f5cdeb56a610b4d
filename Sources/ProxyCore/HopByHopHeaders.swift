/// Which headers describe one connection rather than the message, and so must not be forwarded
/// by a proxy (RFC 9110 §7.6.1).
///
/// Besides the fixed list, any header named in a `Connection` header is hop-by-hop too, except
/// `Host`, `Content-Length` and `Transfer-Encoding`: a `Connection` token naming one of those is
/// ignored, never obeyed (dropping them would unframe a body or leave a request without its
/// host: request smuggling). Framing is the proxy's own decision (`RequestFraming`,
/// `ResponseFraming`). An upgrade (WebSocket) is the one exception to the rule: `Upgrade` and
/// `Connection: upgrade` must reach the origin for the handshake to happen.
public struct HopByHopHeaders: Sendable {
    /// Lowercased names that are always connection-specific.
    public static let fixed: [String] = [
        "connection", "proxy-connection", "keep-alive", "te", "trailer", "upgrade",
        "proxy-authorization", "proxy-authenticate",
    ]

    /// Names a `Connection` token may never remove: the message's routing and framing.
    static let neverHopByHop: Set<String> = ["host", "content-length", "transfer-encoding"]

    /// The fixed list alone: what a message whose `Connection` names nothing else drops.
    public static let standard = HopByHopHeaders(connectionValues: [], forwardUpgrade: false)

    /// Lowercased names to drop, given the values of the message's `Connection` headers. A short
    /// array: compared by length first, it beats hashing every header name.
    private let names: [String]
    /// True when the message asks to upgrade the connection and the upgrade is forwarded.
    public let keepsUpgrade: Bool

    /// - Parameters:
    ///   - connectionValues: every `Connection` header value of the message, as received or as
    ///     `HTTPHeaders[canonicalForm:]` splits them (the same names either way).
    ///   - forwardUpgrade: keep `Upgrade` and send `Connection: upgrade` on (WebSocket handshakes).
    public init(connectionValues: [String], forwardUpgrade: Bool) {
        var names = Self.fixed
        var mentionsUpgrade = false
        for value in connectionValues {
            for token in value.split(separator: ",") {
                let name = token.trimmingWhitespace().lowercased()
                guard !name.isEmpty else { continue }
                if name == "upgrade" {
                    mentionsUpgrade = true
                } else if name != "close" && name != "keep-alive" && !Self.neverHopByHop.contains(name)
                            && !names.contains(name) {
                    names.append(name)
                }
            }
        }
        self.keepsUpgrade = forwardUpgrade && mentionsUpgrade
        if self.keepsUpgrade {
            names.removeAll { $0 == "upgrade" }
        }
        self.names = names
    }

    /// Whether a `Connection` value names nothing but `keep-alive` or `close` (or nothing): with
    /// only such values the fields to drop are exactly the fixed list, the common case (most
    /// origins send `Connection: keep-alive`). Split and trimmed as `init` does, each token
    /// compared by its ASCII letters in either case; anything else (another name, `upgrade`, a
    /// non-ASCII spelling `init` would lowercase to one of them) answers false and leaves the
    /// decision to `init`. A value without a comma, the usual one, is not split.
    public static func namesOnlyPersistence(_ connectionValue: String) -> Bool {
        guard connectionValue.utf8.contains(UInt8(ascii: ",")) else {
            return isPersistenceToken(Substring(connectionValue))
        }
        return connectionValue.split(separator: ",").allSatisfy(isPersistenceToken)
    }

    /// Empty (after trimming), `keep-alive` or `close`; lengths compared first, so a long token
    /// is never copied.
    private static func isPersistenceToken(_ token: Substring) -> Bool {
        let trimmed = token.trimmingWhitespace()
        switch trimmed.utf8.count {
        case 0: return true
        case 5: return String(trimmed).equalsIgnoringASCIICase("close")
        case 10: return String(trimmed).equalsIgnoringASCIICase("keep-alive")
        default: return false
        }
    }

    /// Which names of `fixed` a message holds: bit `i` for `fixed[i]`. Found in the one pass that
    /// decides whether the fixed list is the whole filter (`ExchangeDriver.hopByHopFields`), so
    /// dropping them needs no second scan per name.
    public struct FixedNames: OptionSet, Hashable, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        public init(index: Int) { self.init(rawValue: 1 << UInt8(index)) }

        public static let connection = FixedNames(index: 0)
        public static let proxyConnection = FixedNames(index: 1)
        public static let keepAlive = FixedNames(index: 2)
        public static let te = FixedNames(index: 3)

        /// Calls `body` with each name held, lowercased, in the order of `fixed` (no array is
        /// built: this runs for nearly every response).
        public func forEachName(_ body: (String) -> Void) {
            for index in HopByHopHeaders.fixed.indices where contains(FixedNames(index: index)) {
                body(HopByHopHeaders.fixed[index])
            }
        }
    }

    /// The position of `name` (any case) in `fixed`, nil for every other name.
    public static func fixedIndex(of name: String) -> Int? {
        let count = name.utf8.count
        for (index, candidate) in fixed.enumerated() where candidate.utf8.count == count && name.equalsIgnoringASCIICase(candidate) {
            return index
        }
        return nil
    }

    /// Whether `name` could be one of the fixed hop-by-hop names, judged by its length alone
    /// (2, 7, 10, 16, 18 or 19 bytes): a scan over a message's headers usually stops here.
    @inlinable
    public static func mayBeHopByHop(_ name: String) -> Bool {
        switch name.utf8.count {
        case 2, 7, 10, 16, 18, 19: return true
        default: return false
        }
    }

    /// Whether a header called `name` stays on the forwarded message.
    ///
    /// `Content-Length` and `Transfer-Encoding` pass here: the engine drops them itself and
    /// writes the one framing header it decided (`RequestFraming`, `ResponseFraming`).
    public func forwards(_ name: String) -> Bool {
        for candidate in names where candidate.equalsIgnoringASCIICase(name) {
            return false
        }
        return true
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs: HTTP's optional whitespace (RFC 9110 §5.6.3).
    /// The same as NIO's trimming of `HTTPHeaders[canonicalForm:]` elements. Compared byte by byte
    /// (no grapheme breaking: this runs on every request's fields).
    public func trimmingWhitespace() -> Substring {
        let isWhitespace = { (byte: UInt8) in byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") }
        guard let first = utf8.firstIndex(where: { !isWhitespace($0) }),
              let last = utf8.lastIndex(where: { !isWhitespace($0) }) else {
            return self[endIndex...]
        }
        return Substring(utf8[first...last])
    }
}
