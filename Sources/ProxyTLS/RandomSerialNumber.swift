import X509

/// Serial numbers for every certificate ProxyApp signs: 16 random bytes (126 bits of entropy),
/// positive and without a leading zero byte, so the DER integer stays within RFC 5280's 20 octets.
/// (`Certificate.SerialNumber()` draws 20 bytes and prepends a zero to half of them: 21 octets.)
enum RandomSerialNumber {
    static func make() -> Certificate.SerialNumber {
        var generator = SystemRandomNumberGenerator()
        var bytes: [UInt8] = []
        bytes.reserveCapacity(16)
        for _ in 0..<2 {  // two 64-bit draws: one getrandom call each
            withUnsafeBytes(of: generator.next() as UInt64) { bytes.append(contentsOf: $0) }
        }
        bytes[0] = (bytes[0] & 0x7F) | 0x40
        return Certificate.SerialNumber(bytes: bytes)
    }
}
