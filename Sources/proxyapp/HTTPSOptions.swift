import ArgumentParser
import CaptureStore
import Foundation
import SharedCapture
import Logging
import PersistentPins
import ProxyCore
import NIOSSL
import ProxyEngine
import ProxyTLS

/// The `run` options for HTTPS interception, and how they become the engine's
/// `TLSInterception`: the root CA (created on first start), the leaf cache, the upstream TLS
/// context and the pin registry.
struct HTTPSOptions: ParsableArguments {
    @Option(name: .customLong("upstream-ca"),
            help: "A PEM file of CA certificates to trust for origins, besides the system's.")
    var upstreamCA: String?

    @Flag(name: .customLong("insecure-upstream"),
          help: "Do not verify origins' certificates (anyone on the path can then read decrypted traffic).")
    var insecureUpstream = false

    @Flag(name: .customLong("no-intercept"), help: "Relay every CONNECT as an opaque tunnel (no HTTPS decryption).")
    var noIntercept = false

    @Flag(name: .customLong("no-http2"),
          help: "Speak only HTTP/1.1 with decrypted clients and origins (by default HTTP/2 is offered on both sides).")
    var noHTTP2 = false

    /// Which clients' requests are offered HTTP/2 to the origin (`UpstreamTLSPolicy.http2ForHTTP1Clients`).
    enum OriginHTTP2: String, ExpressibleByArgument, CaseIterable {
        /// Only an HTTP/2 client's: the origin sees the protocol the client chose.
        case client
        /// Every request (not upgrades): HTTP/1.1 clients reach an HTTP/2 origin over HTTP/2.
        case always
    }

    @Option(name: .customLong("origin-http2"),
            help: "client: offer origins HTTP/2 only for clients that speak it (the default); always: for every request (an upgrade stays on HTTP/1.1).")
    var originHTTP2: OriginHTTP2 = .client

    @Option(name: .customLong("client-tls-min"),
            help: ArgumentHelp("Lowest TLS version a client may use: 1.0, 1.1, 1.2 or 1.3 (default 1.2; below 1.2 allows legacy cipher suites).",
                               valueName: "version"))
    var clientTLSMin: TLSProtocolVersion?

    @Option(name: .customLong("upstream-tls-min"),
            help: ArgumentHelp("Lowest TLS version spoken to origins: 1.0, 1.1, 1.2 or 1.3 (default 1.2; below 1.2 allows legacy cipher suites).",
                               valueName: "version"))
    var upstreamTLSMin: TLSProtocolVersion?

    @Option(name: .customLong("pin-ttl"),
            help: "How long a host whose clients rejected our certificate is passed through (e.g. 7d, 12h).")
    var pinTTL: DurationArgument = PinsCommand.defaultPinTTL

    @Option(name: .customLong("max-pins"),
            help: "The most hosts pinned at once; a new pin evicts the one seen longest ago.")
    var maxPins: Int = AutoPinPolicy.Limits().maximumPins

    @Option(name: .customLong("pin-rate"),
            help: "New pins one client address (an IPv6 /64) may cause per minute; more are refused and noted.")
    var pinRate: Int = AutoPinPolicy.Limits().newPinsPerClientPerMinute

    @Option(name: .customLong("first-bytes-timeout"),
            help: "How long a CONNECT tunnel waits for the client's first bytes to complete a TLS ClientHello or HTTP request line before relaying it undecrypted (e.g. 30s).")
    var firstBytesTimeout: DurationArgument = DurationArgument(seconds: 30)

    func validate() throws {
        if maxPins < 1 {
            throw ValidationError("--max-pins \(maxPins): must be at least 1.")
        }
        if pinRate < 1 {
            throw ValidationError("--pin-rate \(pinRate): must be at least 1 new pin per minute.")
        }
        if let upstreamCA, !FileManager.default.isReadableFile(atPath: upstreamCA) {
            throw ValidationError("--upstream-ca \(upstreamCA): no readable file there. Pass a PEM file of CA certificates.")
        }
        if noIntercept && (upstreamCA != nil || insecureUpstream || clientTLSMin != nil || upstreamTLSMin != nil || noHTTP2) {
            throw ValidationError(
                "--upstream-ca, --insecure-upstream, --client-tls-min, --upstream-tls-min and --no-http2 only apply with interception: drop --no-intercept.")
        }
        if originHTTP2 == .always && (noIntercept || noHTTP2) {
            throw ValidationError("--origin-http2 always offers origins HTTP/2, which \(noIntercept ? "--no-intercept" : "--no-http2") rules out: drop one of them.")
        }
    }

    /// What interception needs at run time, and what the start-up banner says about it.
    struct Setup {
        var interception: TLSInterception
        var rootCertificate: RootCertificateDownload
        var pins: PersistentPinRegistry
        var banner: String
        /// The CA's PEM file, and whether this start created it (the TUI's `i` screen says so).
        var certificatePath: String
        var createdNow: Bool
    }

    /// Loads or creates the root CA under `<data-dir>/ca` and builds everything else; nil with
    /// `--no-intercept`.
    /// `pins`: where pinned hosts are kept (the capture database, or a shared store, whose
    /// server may be down at start: the pins are then read once it answers).
    func makeSetup(data: DataDirectoryOptions, pins pinStore: any PinStore, logger: Logger) throws -> Setup? {
        guard !noIntercept else { return nil }
        let store = data.certificateAuthorityStore
        let authority: CertificateAuthority
        let created: Bool
        do {
            (authority, created) = try store.loadOrCreateReportingCreation()
        } catch {
            throw CLIError("\(error)")
        }
        let clientMinimum = clientTLSMin ?? .defaultMinimum
        let upstreamMinimum = upstreamTLSMin ?? .defaultMinimum
        var upstream: UpstreamTLSPolicy
        do {
            upstream = try UpstreamTLSPolicy(
                additionalRootsPEMFile: upstreamCA, verify: !insecureUpstream, minimumVersion: upstreamMinimum,
                offersHTTP2: !noHTTP2)
            upstream.http2ForHTTP1Clients = originHTTP2 == .always
        } catch {
            throw CLIError("cannot use --upstream-ca \(upstreamCA ?? "(none)"): \(error). Pass a PEM file of CA certificates.")
        }
        let pins: PersistentPinRegistry
        do {
            pins = try PersistentPinRegistry(
                repository: pinStore, ttl: TimeInterval(pinTTL.seconds),
                limits: AutoPinPolicy.Limits(maximumPins: maxPins, newPinsPerClientPerMinute: pinRate), logger: logger,
                startsDuringOutage: pinStore is PostgresPinStore)
        } catch {
            let reason = CaptureErrorText.describe(error)
            throw CLIError("cannot read the pinned hosts from \(pinStore.pinStoreDescription): \(reason). Pass another --data-dir.")
        }
        let leaves = LeafCertificateCache(minter: try LeafCertificateMinter(authority: authority))
        var interception = TLSInterception(identities: leaves, upstream: upstream, pins: pins)
        interception.clientMinimumVersion = clientMinimum
        interception.offersHTTP2 = !noHTTP2
        interception.firstBytesTimeout = .seconds(Int64(firstBytesTimeout.seconds))
        let name = authority.certificate.subject.description
        let root = RootCertificateDownload(der: authority.certificateDER, pem: authority.certificatePEM,
                                           sha256Fingerprint: authority.sha256Fingerprint, name: name)
        var banner = "HTTPS: decrypting with the root CA \(store.certificatePEMPath) (\(created ? "created now" : "reused"))\n"
        banner += "  trust it on a device: open http://\(RootCertificateDownload.pageHost)/ through the proxy, or see ca/README.md\n"
        if insecureUpstream {
            banner += "warning: --insecure-upstream: origins' certificates are not verified.\n"
        }
        banner += Self.legacyVersionWarnings(client: clientMinimum, upstream: upstreamMinimum)
        return Setup(interception: interception, rootCertificate: root, pins: pins, banner: banner,
                     certificatePath: store.certificatePEMPath, createdNow: created)
    }

    /// One warning line per leg allowed below TLS 1.2.
    static func legacyVersionWarnings(client: TLSProtocolVersion, upstream: TLSProtocolVersion) -> String {
        var text = ""
        if client.isLegacy {
            text += "warning: --client-tls-min \(client.argument): clients on \(client.name) are decrypted, "
                + "with legacy cipher suites (CBC, no forward secrecy).\n"
        }
        if upstream.isLegacy {
            text += "warning: --upstream-tls-min \(upstream.argument): origins on \(upstream.name) are accepted, "
                + "with legacy cipher suites (CBC, no forward secrecy), while clients may believe they have TLS 1.3.\n"
        }
        return text
    }
}

extension TLSProtocolVersion: ExpressibleByArgument {
    public static var allValueStrings: [String] { allCases.map(\.argument) }
    public var defaultValueDescription: String { argument }
}
