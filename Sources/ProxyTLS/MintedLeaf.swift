import Foundation
import NIOSSL

/// A minted leaf in the form a NIOSSL server context takes: chain (leaf, then root) and the
/// shared leaf key, plus the leaf's DER (for tests and export) and when it stops being valid
/// (so caches know when to mint again).
public struct MintedLeaf: Sendable {
    public let certificateChain: [NIOSSLCertificate]
    public let privateKey: NIOSSLPrivateKey
    public let leafDER: [UInt8]
    public let notAfter: Date

    public init(certificateChain: [NIOSSLCertificate], privateKey: NIOSSLPrivateKey, leafDER: [UInt8], notAfter: Date) {
        self.certificateChain = certificateChain
        self.privateKey = privateKey
        self.leafDER = leafDER
        self.notAfter = notAfter
    }
}
