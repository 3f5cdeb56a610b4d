import ArgumentParser
import ProxyCore
import ProxyEngine

/// The `run` options that send the proxy's own upstream connections through another proxy:
/// `--upstream-proxy` and `--upstream-bypass` (`UpstreamProxySettings`; rules can choose per
/// host and path with `upstream_proxy`).
struct UpstreamProxyOptions: ParsableArguments {
    @Option(name: .customLong("upstream-proxy"),
            help: ArgumentHelp("Reach origins through this proxy: http://[USER:PASS@]HOST:PORT (CONNECT for HTTPS and "
                               + "tunnels), socks5://… (ProxyApp resolves names) or socks5h://… (the proxy does).",
                               valueName: "url"))
    var upstreamProxyURL: String?

    @Option(name: .customLong("upstream-bypass"),
            help: ArgumentHelp("Hosts that go direct, not through --upstream-proxy: comma-separated patterns as rules "
                               + "write them (localhost,127.0.0.1,*.corp.example); repeatable.", valueName: "hosts"),
            transform: UpstreamProxyOptions.parseBypass)
    var upstreamBypass: [[HostPattern]] = []

    /// The proxy `--upstream-proxy` names (checked in `validate`: a transform's error would
    /// quote the value, password and all).
    var upstreamProxy: UpstreamProxy? {
        upstreamProxyURL.flatMap { try? UpstreamProxy.parse($0).get() }
    }

    static func parseBypass(_ text: String) throws -> [HostPattern] {
        try text.split(separator: ",").map { part in
            let pattern = part.trimmingCharacters(in: .whitespaces)
            do {
                return try HostPattern(pattern)
            } catch {
                throw ValidationError("--upstream-bypass '\(pattern.prefix(80))': \(error).")
            }
        }
    }

    func validate() throws {
        if let upstreamProxyURL, case .failure(let error) = UpstreamProxy.parse(upstreamProxyURL) {
            throw ValidationError("--upstream-proxy: \(error.reason).")
        }
        if upstreamProxyURL == nil && !upstreamBypass.isEmpty {
            throw ValidationError("--upstream-bypass names hosts that skip --upstream-proxy: give --upstream-proxy URL too.")
        }
    }

    var settings: UpstreamProxySettings {
        UpstreamProxySettings(proxy: upstreamProxy, bypass: HostPatternList(upstreamBypass.flatMap { $0 }))
    }

    /// The banner's line, when there is an upstream proxy.
    var bannerLine: String? {
        guard let upstreamProxy else { return nil }
        let bypass = upstreamBypass.flatMap { $0 }.map(\.text)
        return "Upstream proxy: \(upstreamProxy)" + (bypass.isEmpty ? "" : " (direct: \(bypass.joined(separator: ", ")))")
    }
}
