import Crypto
import X509
import _CryptoExtras

/// Which CA keys ProxyApp signs with, and the signature algorithm each one uses. Clients accept
/// EC P-256 and P-384 and RSA of 2048 bits or more for a TLS CA; P-521 and Ed25519 are refused
/// by browsers, so they are refused here rather than minting leaves nobody accepts.
enum CertificateSigningKey {
    static func signatureAlgorithm(for key: Certificate.PublicKey) throws -> Certificate.SignatureAlgorithm {
        if P256.Signing.PublicKey(key) != nil { return .ecdsaWithSHA256 }
        if P384.Signing.PublicKey(key) != nil { return .ecdsaWithSHA384 }
        if let rsa = _RSA.Signing.PublicKey(key), rsa.keySizeInBits >= 2048 { return .sha256WithRSAEncryption }
        throw CertificateAuthorityError.unsupportedKeyType(describe(key))
    }

    /// "EC P-256", "EC P-384", "RSA 2048", …: the key's kind for people.
    static func describe(_ key: Certificate.PublicKey) -> String {
        if P256.Signing.PublicKey(key) != nil { return "EC P-256" }
        if P384.Signing.PublicKey(key) != nil { return "EC P-384" }
        if P521.Signing.PublicKey(key) != nil { return "EC P-521" }
        if let rsa = _RSA.Signing.PublicKey(key) { return "RSA \(rsa.keySizeInBits)" }
        if Curve25519.Signing.PublicKey(key) != nil { return "Ed25519" }
        return key.description
    }
}
