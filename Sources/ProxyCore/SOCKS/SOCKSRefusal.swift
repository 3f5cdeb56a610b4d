/// The answers that refuse a SOCKS client before any handshake state exists: where the proxy
/// turns a client away by its first byte (the listener's sniffer, the `--allow-clients` refusal).
public enum SOCKSRefusal {
    /// SOCKS5: "no acceptable methods" (RFC 1928 §3), then the server closes.
    public static let noAcceptableMethod: [UInt8] = [0x05, 0xFF]
    /// SOCKS4 and 4a: "request rejected or failed" (0x5B); SOCKS4 has no login and no IPv6.
    public static let socks4Rejected: [UInt8] = [0x00, 0x5B, 0, 0, 0, 0, 0, 0]
}
