import ProxyTLS

/// The root CA's leaf cache is where the engine gets the certificates it presents.
extension LeafCertificateCache: ServerIdentityProvider {
    public func identity(forHost host: String,
                         completion: @escaping @Sendable (Result<ServerIdentity, any Error>) -> Void) {
        leaf(for: host) { result in
            completion(result.map { ServerIdentity(certificateChain: $0.certificateChain, privateKey: $0.privateKey) })
        }
    }
}
