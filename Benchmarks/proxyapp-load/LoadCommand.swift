import ArgumentParser
import Dispatch
import NIOCore
import NIOSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `proxyapp-load`: the HTTP/HTTPS load generator of `scripts/bench`, written because no Debian
/// tool sends CONNECT + TLS load (wrk cannot CONNECT, hey's keep-alive re-dials at random).
struct LoadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxyapp-load",
        abstract: "Load an HTTP(S) URL directly or through a proxy (CONNECT + TLS for https).",
        discussion: """
            Each connection is a worker with one request in flight: GET the URL, read the whole \
            response, send the next. Through --proxy, https URLs are reached with CONNECT and TLS \
            inside the tunnel (SNI = the URL's host unless it is an IP address, ALPN http/1.1, \
            key exchange X25519 or P-256), \
            http URLs with absolute-form requests.

            With --h2 (https URLs only) each connection speaks HTTP/2 (ALPN h2 only; the run \
            fails if the server chooses anything else) and keeps --streams requests in flight, \
            each on its own stream, a new one as soon as one ended.

            Output: one line on stdout, completed=N seconds=S rps=R p50_ms=.. p90_ms=.. p99_ms=.. \
            max_ms=.. errors=E non2xx=M responses=T connections=C. completed, rps (2xx/3xx only), \
            latencies and non2xx cover the measured window (after --warmup); responses, connections \
            and errors the whole run. Errors are summed up on stderr.

            Exit status: 0; 3 when some requests failed or got a status outside 2xx/3xx; 1 when no \
            2xx/3xx response was measured or the run could not start or finish; 64 for bad arguments.
            """)

    @Option(help: "http:// or https:// URL to GET.")
    var url: String

    @Option(help: "HTTP proxy, HOST:PORT (http://HOST:PORT is accepted too). Without it: direct.")
    var proxy: String?

    @Flag(help: "Reach --url through --proxy as a SOCKS5 proxy (no login; CONNECT by host name), for http and https.")
    var socks5 = false

    @Option(help: "Concurrent connections (workers).")
    var connections = 50

    @Option(help: "Seconds measured, after the warm-up.")
    var duration = 10.0

    @Option(help: "Seconds of load before the measured window.")
    var warmup = 0.0

    @Flag(help: "A new TCP (+ CONNECT) + TLS connection for every request, closed after its response.")
    var newConnectionPerRequest = false

    @Flag(help: "Speak HTTP/2 over TLS (ALPN h2 only; https URLs), --streams requests in flight per connection.")
    var h2 = false

    @Option(help: "With --h2: concurrent streams per connection (default 50).")
    var streams: Int?

    @Option(help: "PEM file of the CA(s) to trust for https; required unless --insecure.")
    var cacert: String?

    @Flag(help: "Do not verify the server's certificate.")
    var insecure = false

    @Option(help: "Seconds a connection set-up or a request may go without completing.")
    var timeout = 10.0

    @Option(help: "Event loop threads.")
    var threads = 1

    func validate() throws {
        guard let target = LoadTarget(url: url) else {
            throw ValidationError("--url must be http://HOST[:PORT][/PATH] or https://… (got '\(url)').")
        }
        if let proxy, proxyEndpoint(proxy) == nil {
            throw ValidationError("--proxy must be HOST:PORT, e.g. 127.0.0.1:8080 (got '\(proxy)').")
        }
        guard (1...10_000).contains(connections) else { throw ValidationError("--connections must be 1 to 10000.") }
        guard duration > 0 && duration <= 3600 else { throw ValidationError("--duration must be more than 0 and at most 3600 seconds.") }
        guard warmup >= 0 && warmup <= 600 else { throw ValidationError("--warmup must be 0 to 600 seconds.") }
        guard timeout > 0 && timeout <= 600 else { throw ValidationError("--timeout must be more than 0 and at most 600 seconds.") }
        guard (1...64).contains(threads) else { throw ValidationError("--threads must be 1 to 64.") }
        if target.scheme == .https && cacert == nil && !insecure {
            throw ValidationError("an https URL needs --cacert FILE (the CA that issued the server's certificate) or --insecure.")
        }
        if h2 && target.scheme != .https {
            throw ValidationError("--h2 speaks HTTP/2 over TLS only (ALPN h2): use an https:// URL (got '\(url)').")
        }
        if h2 && newConnectionPerRequest {
            throw ValidationError("--new-connection-per-request is for HTTP/1.1; with --h2 use --streams 1 and more --connections.")
        }
        if let streams {
            guard h2 else { throw ValidationError("--streams needs --h2 (HTTP/1.1 has one request in flight per connection).") }
            guard (1...1000).contains(streams) else { throw ValidationError("--streams must be 1 to 1000.") }
        }
        if socks5 && proxy == nil {
            throw ValidationError("--socks5 says how to speak to --proxy: give --proxy HOST:PORT too.")
        }
        if cacert != nil && insecure {
            throw ValidationError("--cacert and --insecure exclude each other.")
        }
    }

    func run() throws {
        signal(SIGPIPE, SIG_IGN)
        let plan = try makePlan()
        // Never hang: warm-up + duration + one timeout for the requests in flight at the end,
        // plus slack for start and shutdown.
        let limit = warmup + duration + timeout + 10
        let deadline = DispatchWorkItem {
            Self.exitWithError("the run did not finish within \(Int(limit)) s (warm-up + duration + timeout + 10 s); giving up")
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + limit, execute: deadline)
        defer { deadline.cancel() }
        let run = LoadRun(plan: plan, connections: connections, threads: threads,
                          warmup: Self.amount(warmup), duration: Self.amount(duration))
        let figures: LoadFigures
        do {
            figures = try run.execute()
        } catch let giveUp as LoopLoad.GiveUp {
            throw LoadCommandError("every attempt failed (\(giveUp.figures.errors) errors, no response); first errors:\n  "
                + giveUp.figures.firstErrors.joined(separator: "\n  "))
        }
        print(figures.summaryLine(seconds: duration))
        if figures.errors > 0 {
            Self.printError("\(figures.errors) error\(figures.errors == 1 ? "" : "s"); first:\n  "
                + figures.firstErrors.joined(separator: "\n  "))
        }
        guard figures.completed > 0 else {
            throw LoadCommandError("no response completed in the \(duration) s window (see the errors above, or lengthen --timeout)")
        }
        guard figures.completed > figures.non2xx else {
            throw LoadCommandError("every response in the window had a status outside 2xx/3xx (\(figures.non2xx) of them): check --url")
        }
        if figures.errors > 0 || figures.non2xx > 0 { throw ExitCode(3) }
    }

    /// Resolves the address, loads the CA, builds the TLS context and the request bytes.
    func makePlan() throws -> LoadPlan {
        let target = LoadTarget(url: url)!  // checked by validate()
        let endpoint = proxy.map { proxyEndpoint($0)! } ?? HostAndPort(host: target.host, port: target.port)
        let address: SocketAddress
        do {
            address = try SocketAddress.makeAddressResolvingHost(endpoint.host, port: endpoint.port)
        } catch {
            throw LoadCommandError("cannot resolve \(endpoint.host): \(error). Use an IP address or a name this machine resolves.")
        }
        let throughProxy = proxy != nil
        if throughProxy, target.scheme == .https, target.hostIsIPAddress, !insecure,
           (try? SocketAddress(ipAddress: target.host, port: 0))?.ipAddress != address.ipAddress {
            // NIOSSL checks an IP address against the connected peer, which is the proxy here.
            throw LoadCommandError("an https URL with an IP address is only verified through a proxy on that same address; use a host name in --url, or --insecure")
        }
        return LoadPlan(target: target, connectAddress: address, throughProxy: throughProxy, socks5: socks5,
                        tlsContext: target.scheme == .https ? try makeTLSContext() : nil,
                        newConnectionPerRequest: newConnectionPerRequest, timeout: Self.amount(timeout),
                        http2Streams: h2 ? streams ?? Self.defaultStreams : nil)
    }

    static let defaultStreams = 50

    private func makeTLSContext() throws -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.applicationProtocols = h2 ? ["h2"] : ["http/1.1"]
        // Classical key exchange only. BoringSSL would also offer X25519MLKEM768: the proxy
        // (BoringSSL) would take it and nginx (OpenSSL 3.0) could not, so direct and proxied
        // handshakes would differ, and every handshake would pay for two key shares here.
        configuration.curves = [.x25519, .secp256r1]
        if insecure {
            configuration.certificateVerification = .none
        } else if let cacert {
            let roots: [NIOSSLCertificate]
            do {
                roots = try NIOSSLCertificate.fromPEMFile(cacert)
            } catch {
                throw LoadCommandError("cannot read a PEM certificate from --cacert \(cacert): \(error). Pass the CA's PEM file.")
            }
            guard !roots.isEmpty else { throw LoadCommandError("--cacert \(cacert) holds no PEM certificate.") }
            configuration.trustRoots = .certificates(roots)
        }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw LoadCommandError("cannot build the TLS client context: \(error)")
        }
    }

    private func proxyEndpoint(_ text: String) -> HostAndPort? {
        var text = Substring(text)
        if text.lowercased().hasPrefix("http://") { text = text.dropFirst("http://".count) }
        if text.lowercased().hasPrefix("socks5://") { text = text.dropFirst("socks5://".count) }
        if text.hasSuffix("/") { text = text.dropLast() }
        return HostAndPort(text, defaultPort: nil)
    }

    private static func amount(_ seconds: Double) -> TimeAmount {
        .nanoseconds(Int64(seconds * 1e9))
    }

    static func printError(_ message: String) {
        writeToStandardError("proxyapp-load: \(message)\n")
    }

    static func exitWithError(_ message: String) -> Never {
        printError("error: \(message)")
        terminateProcess(status: 1)
    }
}

/// A failure at run time, printed by argument-parser as `Error: …` (exit status 1).
struct LoadCommandError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}

/// Unbuffered, whole-string writes to standard error (stdout carries the result line).
func writeToStandardError(_ text: String) {
    var text = text
    text.withUTF8 { bytes in
        var offset = 0
        while offset < bytes.count {
            let written = write(STDERR_FILENO, bytes.baseAddress! + offset, bytes.count - offset)
            guard written > 0 else { return }
            offset += written
        }
    }
}

/// Ends the process at once (argument-parser's types have an `exit` of their own).
func terminateProcess(status: Int32) -> Never {
    exit(status)
}
