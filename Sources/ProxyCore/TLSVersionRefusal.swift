/// What the proxy says when a peer is refused for its TLS version, on either leg: which
/// version the peer offered and the flag that would allow it.
///
/// It exists so the refusal is a decision without I/O: the client leg decides from the
/// ClientHello the sniffer already parsed (before the TLS library answers with a
/// `protocol_version` alert), the upstream leg from the version the origin turned out to speak.
/// A refusal for the version is the proxy's own policy, never a client rejecting our
/// certificate, so the engine must not count it towards pinning.
public enum TLSVersionRefusal {
    /// The highest version a ClientHello offers: the largest known value of
    /// `supported_versions` (GREASE and unknown values skipped), else `legacy_version`.
    public static func highestOfferedVersion(_ hello: TLSClientHello) -> UInt16 {
        let offered = hello.supportedVersions.filter { !isGREASE($0) && TLSProtocolVersion(wireValue: $0) != nil }
        return offered.max() ?? hello.legacyVersion
    }

    /// The note for a client whose ClientHello offers nothing at or above `minimum`, or nil when
    /// it offers an acceptable version.
    public static func clientNote(for hello: TLSClientHello, minimum: TLSProtocolVersion) -> String? {
        let highest = highestOfferedVersion(hello)
        if let version = TLSProtocolVersion(wireValue: highest) {
            guard version < minimum else { return nil }
            return "client offered only \(version.name); use --client-tls-min \(version.argument) to allow it"
        }
        // Above TLS 1.3 (a future version with no 1.3 fallback) is the TLS library's to judge.
        guard highest < TLSProtocolVersion.tls10.wireValue else { return nil }
        return "client offered only \(TLSProtocolVersion.name(ofWireValue: highest)), which ProxyApp never accepts"
    }

    /// The reason an origin that speaks at most `originVersion` (below the minimum) is refused.
    public static func upstreamReason(originVersion: TLSProtocolVersion) -> String {
        "origin offers only \(originVersion.name); use --upstream-tls-min \(originVersion.argument) to allow it"
    }

    /// The reason an origin is refused whose TLS version is acceptable but whose cipher suites
    /// are all legacy ones (no forward-secret AEAD suite), which only a minimum below TLS 1.2
    /// allows.
    public static let upstreamLegacyCiphersReason =
        "origin offers only legacy cipher suites (no forward-secret AEAD suite); "
        + "use --upstream-tls-min 1.1 to allow them (that also allows TLS 1.1)"

    /// RFC 8701 GREASE values: 0x0A0A, 0x1A1A … 0xFAFA.
    static func isGREASE(_ value: UInt16) -> Bool {
        value & 0x0F0F == 0x0A0A && value >> 8 == value & 0xFF
    }
}
