/// A TLS protocol version the proxy can be told to accept at least, on either leg
/// (`--client-tls-min`, `--upstream-tls-min`).
///
/// It exists so the two legs share one vocabulary: the spelling users type (`1.2`), the one the
/// proxy writes in messages (`TLS 1.2`) and the wire value a ClientHello carries (0x0303).
/// TLS 1.2 is the default minimum on both legs, as in mitmproxy: older versions lack forward
/// secrecy and AEAD ciphers as a rule, and a client must never believe it has TLS 1.3 while the
/// proxy speaks TLS 1.0 behind it.
public enum TLSProtocolVersion: UInt16, Sendable, CaseIterable, Comparable {
    case tls10 = 0x0301
    case tls11 = 0x0302
    case tls12 = 0x0303
    case tls13 = 0x0304

    /// The minimum on both legs unless lowered or raised on the command line.
    public static let defaultMinimum = TLSProtocolVersion.tls12

    /// Reads the command-line spelling: `1.0`, `1.1`, `1.2` or `1.3`.
    public init?(argument: String) {
        guard let version = Self.allCases.first(where: { $0.argument == argument }) else { return nil }
        self = version
    }

    /// The version a wire value names; nil for SSL 3.0, GREASE and anything unknown.
    public init?(wireValue: UInt16) {
        self.init(rawValue: wireValue)
    }

    public var wireValue: UInt16 { rawValue }

    /// As typed on the command line: `1.2`.
    public var argument: String {
        switch self {
        case .tls10: return "1.0"
        case .tls11: return "1.1"
        case .tls12: return "1.2"
        case .tls13: return "1.3"
        }
    }

    /// As written in messages: `TLS 1.2`.
    public var name: String { "TLS \(argument)" }

    /// Below TLS 1.2: allowing it also allows the CBC and RSA-key-exchange cipher suites such
    /// peers need.
    public var isLegacy: Bool { self < .tls12 }

    public static func < (lhs: TLSProtocolVersion, rhs: TLSProtocolVersion) -> Bool {
        lhs.rawValue < rhs.rawValue
    }

    /// A wire version in words: `TLS 1.0`, `SSL 3.0`, or the hex value for anything else.
    public static func name(ofWireValue value: UInt16) -> String {
        if let version = TLSProtocolVersion(wireValue: value) { return version.name }
        if value == 0x0300 { return "SSL 3.0" }
        let hex = String(value, radix: 16)
        return "version 0x" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
