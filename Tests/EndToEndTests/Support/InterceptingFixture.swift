import CaptureStore
import Foundation
import Logging
import PersistentPins
import ProxyCore
import ProxyEngine
import Rules
import RulesFile
import TestSupport

/// One intercepting proxy in front of a plain HTTP origin and an HTTPS origin (certificate for
/// `localhost`, signed by the origin CA the proxy trusts), so a test can capture plain and
/// decrypted exchanges into the same store. Everything is torn down after the body, whether it
/// returns or throws.
struct InterceptingFixture {
    let proxy: ProxyHarness
    let origin: TestOrigin
    let tlsOrigin: TestOrigin
    /// A second HTTPS origin whose certificate names `namedOriginHost` (nil unless asked for).
    let namedOrigin: TestOrigin?
    let tls: TLSFixtures
    /// The rules in force; `useRules` replaces them as a reload of the rules file would.
    let rules: LiveRules
    /// The pin registry, when the fixture was asked for one (`pinLimits`).
    let pins: PersistentPinRegistry?

    /// Puts the rules of `yaml` in force (relative map-local paths start at the proxy's scratch
    /// directory).
    func useRules(_ yaml: String) throws {
        rules.replace(with: try RulesFile.parse(yaml, file: "rules.yml", baseDirectory: proxy.directory.path),
                      source: "rules.yml")
    }

    /// `https://localhost:PORT` + `path` on the HTTPS origin.
    func tlsURL(_ path: String) -> String { "https://localhost:\(tlsOrigin.port)\(path)" }

    /// - Parameter namedOriginHost: also start an HTTPS origin with a certificate for this name
    ///   (stopped after the proxy, so no pooled connection keeps it waiting).
    /// - Parameter pinLimits: run with a pin registry over the proxy's capture, with these limits.
    /// - Parameter firstBytesTimeout: the longest a tunnel waits for a decision, in seconds.
    /// - Parameter servesCA: the built-in pages offer the proxy's CA (as `proxyapp run` does).
    /// - Parameter offersHTTP2: decrypted clients and origins may choose HTTP/2 (off: as `--no-http2`).
    /// - Parameter threads: the proxy's event loops (1: every client shares one upstream pool).
    /// - Parameter originSpeaksHTTP2: `tlsOrigin` accepts `h2` in ALPN (it speaks HTTP/2 to the proxy).
    /// - Parameter originHTTP2Always: HTTP/1.1 clients' requests are offered HTTP/2 too (`--origin-http2
    ///   always`; off: the product's default, only HTTP/2 clients').
    /// - Parameter maxConnections: as `--max-connections` (nil: from the open-file limit).
    /// - Parameter configure: changes the rest of the proxy's configuration (access, timeouts).
    /// - Parameter configureWithOrigins: the same, knowing the ports of `origin` and `tlsOrigin`.
    static func run(namedOriginHost: String? = nil, pinLimits: AutoPinPolicy.Limits? = nil, firstBytesTimeout: Double = 30,
                    servesCA: Bool = false, offersHTTP2: Bool = true, maxConnections: Int? = nil,
                    originSpeaksHTTP2: Bool = false, originHTTP2Always: Bool = true, threads: Int = 2,
                    breakpoints: Breakpoints = Breakpoints(),
                    configure: (inout ProxyConfiguration) -> Void = { _ in },
                    configureWithOrigins: (inout ProxyConfiguration, _ origin: Int, _ tlsOrigin: Int) -> Void = { _, _, _ in },
                    _ body: (InterceptingFixture) async throws -> Void) async throws {
        let scratch = try TemporaryDirectory("proxyapp-intercepting")
        defer { scratch.remove() }
        let tls = try TLSFixtures(directory: scratch.url)
        let tlsOrigin = try await TestOrigin.start(tls: try tls.originContext(
            for: "localhost", protocols: originSpeaksHTTP2 ? ["h2", "http/1.1"] : ["http/1.1"]))
        var started: [TestOrigin] = [tlsOrigin]
        var proxy: ProxyHarness?
        do {
            let origin = try await TestOrigin.start()
            started.append(origin)
            var namedOrigin: TestOrigin?
            if let namedOriginHost {
                namedOrigin = try await TestOrigin.start(tls: try tls.originContext(for: namedOriginHost))
                started.append(namedOrigin!)
            }
            let rules = LiveRules()
            var pins: PersistentPinRegistry?
            let logger = Logger(label: "proxyapp.e2e.pins", factory: { _ in SwiftLogNoOpLogHandler() })
            let harness = try await ProxyHarness.start(interception: { repository in
                if let pinLimits {
                    pins = try PersistentPinRegistry(repository: repository, ttl: 3600, limits: pinLimits, logger: logger)
                }
                return try tls.interception(pins: pins, firstBytesTimeout: firstBytesTimeout, offersHTTP2: offersHTTP2,
                                            http2ForHTTP1Clients: originHTTP2Always)
            }, rules: rules, threads: threads, breakpoints: breakpoints) { configuration in
                configuration.maxConnections = maxConnections
                configure(&configuration)
                configureWithOrigins(&configuration, origin.port, tlsOrigin.port)
                if servesCA {
                    configuration.rootCertificate = RootCertificateDownload(
                        der: tls.proxyCA.certificateDER, pem: tls.proxyCA.certificatePEM,
                        sha256Fingerprint: tls.proxyCA.sha256Fingerprint, name: "ProxyApp Test CA")
                }
            }
            proxy = harness
            try await body(InterceptingFixture(proxy: harness, origin: origin, tlsOrigin: tlsOrigin, namedOrigin: namedOrigin,
                                              tls: tls, rules: rules, pins: pins))
        } catch {
            await proxy?.shutdown()
            for origin in started { await origin.shutdown() }
            throw error
        }
        await proxy?.shutdown()
        for origin in started { await origin.shutdown() }
    }
}
