import CaptureStore
import Foundation
import Logging
import PersistentPins
import NIOSSL
import ProxyCore

/// An intercepting proxy with a pin registry and chosen TLS minimums, for the tests of the TLS
/// legs (versions, upstream failure reasons): the harness, its certificates, its pins.
struct TLSProxySetup {
    var proxy: ProxyHarness
    var tls: TLSFixtures
    var pins: PersistentPinRegistry

    /// Runs `body` with a proxy trusting `upstreamCA` (default: the fixtures' origin CA) for
    /// origins; stops it afterwards, whether `body` returns or throws.
    static func run(tls: TLSFixtures, clientMinimum: TLSProtocolVersion = .defaultMinimum,
                    upstreamMinimum: TLSProtocolVersion = .defaultMinimum, upstreamCA: URL? = nil,
                    _ body: (TLSProxySetup) async throws -> Void) async throws {
        let logger = Logger(label: "proxyapp.e2e.tls", factory: { _ in SwiftLogNoOpLogHandler() })
        var pins: PersistentPinRegistry?
        let proxy = try await ProxyHarness.start(interception: { repository in
            let registry = try PersistentPinRegistry(repository: repository, ttl: 3600, logger: logger)
            pins = registry
            return try tls.interception(pins: registry, clientMinimum: clientMinimum, upstreamMinimum: upstreamMinimum,
                                        upstreamCA: upstreamCA)
        })
        do {
            try await body(TLSProxySetup(proxy: proxy, tls: tls, pins: pins!))
        } catch {
            await proxy.shutdown()
            throw error
        }
        await proxy.shutdown()
    }

    /// An HTTPS origin on NIO presenting `context`, stopped after `body` (put the proxy inside,
    /// so no pooled connection keeps the origin waiting).
    static func withOrigin(_ context: NIOSSLContext, _ body: (TestOrigin) async throws -> Void) async throws {
        let origin = try await TestOrigin.start(tls: context)
        do {
            try await body(origin)
        } catch {
            await origin.shutdown()
            throw error
        }
        await origin.shutdown()
    }
}
