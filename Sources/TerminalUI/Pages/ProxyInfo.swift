/// What a user needs to know to use the proxy this TUI shows: where it listens, how to point a
/// client at it, the CA and its page, the rules in force, where the files are.
///
/// The app fills it in (`proxyapp run` knows it all; `proxyapp tui` finds a proxy running on the
/// same data directory, if any); `InfoPage` lays it out for the `i` screen and the empty list.
public struct ProxyInfo: Sendable, Hashable {
    /// Who runs the proxy whose capture is shown.
    public enum Proxy: Sendable, Hashable {
        /// This process (`proxyapp run`).
        case thisProcess
        /// Another process on the same data directory (`proxyapp tui` beside `run --headless`).
        case otherProcess(pid: Int32)
        /// None that we know of: a capture opened on its own.
        case none
    }

    public var proxy: Proxy
    /// `127.0.0.1:8080`; empty when no proxy is known.
    public var listenAddress: String
    public var dataDirectory: String
    public var capturePath: String
    /// What the capture keeps (the banner's `Keeping:` line, without the word); empty when
    /// unknown (another process's proxy).
    public var keeping: String
    /// The file the proxy's log lines go to while a TUI runs (`E` shows it).
    public var logPath: String
    /// The root CA's PEM file when HTTPS is decrypted; empty with `--no-intercept` (or unknown).
    public var caCertificatePath: String
    /// The CA was created when this proxy started: no client trusts it yet.
    public var caCreatedNow: Bool
    /// One line or more about the rules in force; empty when unknown (another process's rules).
    public var rules: [String]
    /// Where devices on the network reach the proxy, and who may use it (the banner's lines);
    /// empty when it listens on loopback only.
    public var devices: [String]
    /// The CA page of each address a device on the network can use, for the `Q` screen's QR
    /// code; empty when the proxy listens on loopback only.
    public var scanTargets: [ScanTarget]

    /// A URL a phone opens by scanning, and where it points (an interface's name).
    public struct ScanTarget: Sendable, Hashable {
        public var url: String
        public var label: String

        public init(url: String, label: String) {
            self.url = url
            self.label = label
        }
    }

    public init(proxy: Proxy = .none, listenAddress: String = "", dataDirectory: String = "", capturePath: String = "",
                logPath: String = "", caCertificatePath: String = "", caCreatedNow: Bool = false, rules: [String] = [],
                devices: [String] = [], scanTargets: [ScanTarget] = [], keeping: String = "") {
        self.proxy = proxy
        self.keeping = keeping
        self.listenAddress = listenAddress
        self.dataDirectory = dataDirectory
        self.capturePath = capturePath
        self.logPath = logPath
        self.caCertificatePath = caCertificatePath
        self.caCreatedNow = caCreatedNow
        self.rules = rules
        self.devices = devices
        self.scanTargets = scanTargets
    }
}

/// The text of the `i` screen and of the empty list, from a `ProxyInfo`: pure, so both are
/// snapshot-tested and always say the same.
public enum InfoPage {
    /// The host every client can fetch the CA page from through the proxy.
    public static let caPageURL = "http://proxyapp.cert/"

    /// The `i` screen: who runs the proxy, how to send traffic, HTTPS, rules, files.
    public static func lines(_ info: ProxyInfo) -> [String] {
        var lines = ["Proxy", "  " + proxyLine(info), ""]
        lines += sendTraffic(info) + [""] + https(info) + [""] + rules(info) + [""]
        lines.append("Files")
        if !info.dataDirectory.isEmpty { lines.append("  data directory  \(info.dataDirectory)") }
        if !info.capturePath.isEmpty { lines.append("  capture         \(info.capturePath)") }
        if !info.keeping.isEmpty { lines.append("  keeping         \(info.keeping)") }
        if !info.logPath.isEmpty { lines.append("  log             \(info.logPath)  (E shows it)") }
        return lines
    }

    /// Under "No flows yet": how to send traffic, the CA page, the rules, and where to look next.
    public static func welcome(_ info: ProxyInfo) -> [String] {
        sendTraffic(info) + [""] + https(info) + [""] + rules(info)
            + ["", "i  this information again    E  event log    ?  all keys"]
    }

    static func proxyLine(_ info: ProxyInfo) -> String {
        switch info.proxy {
        case .thisProcess: "listening on \(info.listenAddress) (this process; quitting stops it)"
        case .otherProcess(let pid): "listening on \(info.listenAddress) (process \(pid), on the same data directory)"
        case .none: "no proxy is running with this data directory: this view only reads the capture"
        }
    }

    static func sendTraffic(_ info: ProxyInfo) -> [String] {
        let known = !info.listenAddress.isEmpty
        let proxy = "http://" + (known ? info.listenAddress : "HOST:PORT")
        var lines: [String] = []
        if known {
            lines.append("Send traffic through the proxy:")
        } else {
            lines += ["No proxy is running with this data directory. Start one in another terminal",
                      "(`proxyapp run --headless`; `proxyapp run` has this view built in), then:"]
        }
        lines += [
            "  curl -x \(proxy) https://example.com/",
            "  export http_proxy=\(proxy) https_proxy=\(proxy)",
            "  (curl ignores HTTP_PROXY; other tools read HTTP_PROXY and HTTPS_PROXY too)",
        ]
        let scan = info.scanTargets.isEmpty ? [] : ["  Q shows the CA page as a QR code for a phone's camera."]
        return lines + info.devices + scan
    }

    static func https(_ info: ProxyInfo) -> [String] {
        guard !info.caCertificatePath.isEmpty else {
            return info.proxy == .thisProcess
                ? ["HTTPS is not decrypted (--no-intercept): CONNECT is relayed as opaque tunnels."]
                : ["HTTPS is decrypted only when the proxy has a CA (`proxyapp ca show`)."]
        }
        let proxy = info.listenAddress.isEmpty ? "HOST:PORT" : info.listenAddress
        let state = info.caCreatedNow ? "created now: no client trusts it yet" : "install it once per client"
        return [
            "HTTPS is decrypted with ProxyApp's CA (\(state)):",
            "  open \(caPageURL) through the proxy, or fetch http://\(proxy)/ProxyCA.cer",
            "  curl alone: --cacert \(info.caCertificatePath)",
        ]
    }

    static func rules(_ info: ProxyInfo) -> [String] {
        info.rules.isEmpty ? ["Rules: known to the proxy's process only; `proxyapp rules check` checks the file."] : info.rules
    }
}
