import ArgumentParser
import ProxyEngine
import Rules

/// `--reverse [LISTEN=]URL`: reverse mode, for clients that cannot be given a proxy. Each
/// mapping is a listener of its own whose requests all go to URL's origin (`ReverseMapping`);
/// the proxy port keeps working as a proxy beside it.
struct ReverseOptions: ParsableArguments {
    @Option(name: .customLong("reverse"),
            help: ArgumentHelp("Be the origin for clients that cannot use a proxy: LISTEN=URL listens on LISTEN "
                               + "(PORT or HOST:PORT) and sends every request to URL (http:// or https://); a URL "
                               + "alone listens on 127.0.0.1:8081. Repeatable.", valueName: "[listen=]url"),
            transform: ReverseOptions.parseMapping)
    var reverse: [ReverseMapping] = []

    @Flag(name: .customLong("reverse-tls"),
          help: "--reverse listeners speak TLS, with a certificate for the origin's name from the root CA.")
    var reverseTLS = false

    /// The mappings as the engine takes them (`--reverse-tls` applied).
    var mappings: [ReverseMapping] {
        reverse.map { mapping in
            var mapping = mapping
            mapping.tls = reverseTLS
            return mapping
        }
    }

    static let defaultPort = 8081

    static func parseMapping(_ text: String) throws -> ReverseMapping {
        var listen = ListenAddress(host: ListenAddress.defaultHost, port: defaultPort)
        var urlText = Substring(text)
        if let equals = text.firstIndex(of: "="), !text[..<equals].contains("/") {
            listen = try ListenAddress.parse(String(text[..<equals]))
            urlText = text[text.index(after: equals)...]
        }
        let destination: RemoteDestination
        do {
            destination = try RemoteDestination(parsing: String(urlText))
        } catch {
            throw ValidationError("\(error). Write LISTEN=URL, e.g. 8081=https://api.example.com.")
        }
        guard destination.path == nil || destination.path == "/", destination.query == nil else {
            throw ValidationError("'\(urlText.prefix(80))' has a path or query: a reverse mapping sends every path to the origin "
                                  + "as requested; give only scheme://host[:port].")
        }
        return ReverseMapping(listen: .init(host: listen.host, port: listen.port), scheme: destination.scheme,
                              host: destination.host, port: destination.port)
    }

    func validate() throws {
        if reverseTLS && reverse.isEmpty {
            throw ValidationError("--reverse-tls makes --reverse listeners speak TLS: give --reverse [LISTEN=]URL too.")
        }
        var seen = Set<ListenEndpoint>()
        for mapping in reverse where !seen.insert(mapping.listen).inserted {
            throw ValidationError("--reverse: two mappings listen on \(mapping.listen.host):\(mapping.listen.port); "
                                  + "give each its own LISTEN (e.g. 8081=URL, 8082=URL).")
        }
    }

    /// Reverse listeners beyond loopback, which need `--allow-clients` (their clients cannot log in).
    var offLoopback: [ReverseMapping] {
        reverse.filter { !ListenAddress(host: $0.listen.host, port: $0.listen.port).isLoopback }
    }

    /// Banner lines, one per mapping.
    var bannerLines: [String] {
        mappings.map { mapping in
            let host = mapping.listen.host.contains(":") ? "[\(mapping.listen.host)]" : mapping.listen.host
            let scheme = mapping.tls ? "https" : "http"
            let trust = mapping.tls ? " (certificate for \(mapping.host); clients trust the root CA)" : ""
            return "Reverse: \(scheme)://\(host):\(mapping.listen.port) → \(mapping.origin)\(trust)"
        }
    }
}
