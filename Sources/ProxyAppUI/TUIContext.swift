import Foundation
import ProxyModel
import TerminalUI

/// What the TUI knows about the process it runs in: given once by the command that starts it.
///
/// `proxyapp run` fills in the listener and the CA and sets `proxyRunning` (quitting then stops
/// the proxy, so `q` asks first); `proxyapp tui` leaves them empty.
public struct TUIContext: Sendable {
    /// `127.0.0.1:8080`; empty when no proxy runs in this process.
    public var listenAddress: String
    /// Where clients download the CA certificate; empty when not served.
    public var caURL: String
    /// The rules state for the header, asked on every frame (`off`, `3 active`, and whether the
    /// last reload failed); empty when this process runs no proxy.
    public var rules: @Sendable () -> String
    /// What the `i` screen and the empty list say (listener, CA, rules, files); asked when drawn,
    /// so the rules are current. Must not block: no disk, no database.
    public var info: @Sendable () -> ProxyInfo
    public var proxyRunning: Bool
    /// The capture is opened read-only: marking, deleting and clearing are refused with a reason.
    public var readOnly: Bool
    /// How long a pin lasts after its last failure (the pins view shows expiry dates).
    public var pinTTL: TimeInterval
    /// Where exported files go when the user types a relative name.
    public var outputDirectory: String
    /// Written into exported HAR files as the creator's version.
    public var version: String
    public var timeZone: TimeZone
    /// Sends flows again (`r`) through the proxy — this process's, or the one on the data
    /// directory through its control channel; blocks until done (run on a worker lane). Nil
    /// when this TUI cannot reach a proxy.
    public var replay: (@Sendable (_ ids: [Int64]) -> TUIActionResult)?
    /// The throttle in force for the header (`3g`); empty when none. Asked on every frame.
    public var throttle: @Sendable () -> String = { "" }
    /// Breakpoints (`b`, the held list, `a`/`A`/`x`); nil when this TUI reaches no proxy.
    public var breakpoints: TUIBreakpoints?
    /// Sends an edited request through the proxy (`R`); blocks until answered. Nil when this
    /// TUI reaches no proxy.
    public var send: (@Sendable (TUIComposedRequest) -> TUIActionResult)?

    public init(listenAddress: String = "", caURL: String = "", rules: @escaping @Sendable () -> String = { "off" },
                info: @escaping @Sendable () -> ProxyInfo = { ProxyInfo() }, proxyRunning: Bool = false,
                readOnly: Bool = false, pinTTL: TimeInterval = 7 * 86_400,
                outputDirectory: String = FileManager.default.currentDirectoryPath, version: String,
                timeZone: TimeZone = .current, throttle: @escaping @Sendable () -> String = { "" },
                replay: (@Sendable (_ ids: [Int64]) -> TUIActionResult)? = nil, breakpoints: TUIBreakpoints? = nil,
                send: (@Sendable (TUIComposedRequest) -> TUIActionResult)? = nil) {
        self.send = send
        self.listenAddress = listenAddress
        self.caURL = caURL
        self.rules = rules
        self.info = info
        self.proxyRunning = proxyRunning
        self.readOnly = readOnly
        self.pinTTL = pinTTL
        self.outputDirectory = outputDirectory
        self.version = version
        self.timeZone = timeZone
        self.replay = replay
        self.throttle = throttle
        self.breakpoints = breakpoints
    }

    /// `name` as a path: absolute names and `~/…` as given, others under `outputDirectory`.
    public func outputPath(_ name: String) -> String {
        if name.hasPrefix("/") { return name }
        if name == "~" || name.hasPrefix("~/") {
            return HomeDirectory.expandingTilde(name)
        }
        return (outputDirectory as NSString).appendingPathComponent(name)
    }
}

/// What an action the TUI asked of the proxy (a replay) came to, for the status line.
public struct TUIActionResult: Sendable, Hashable {
    public var ok: Bool
    /// One line in words: a summary, or why it failed.
    public var message: String

    public init(ok: Bool, message: String) {
        self.ok = ok
        self.message = message
    }
}
