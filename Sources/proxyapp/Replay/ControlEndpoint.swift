import ControlChannel
import ProxyAppUI
import ProxyModel

/// The control channel as `run` opens it: the server when it could listen, and the banner's line
/// either way (a second proxy on the same data directory runs without one, and says so).
struct ControlEndpoint {
    let server: ControlServer?
    let bannerLine: String

    static func open(dataDirectory: String, commands: ControlCommands) -> ControlEndpoint {
        let path = ControlSocket.path(forDataDirectory: dataDirectory)
        do {
            let server = try ControlServer(path: path) { commands.handle($0, cancellation: $1) }
            return ControlEndpoint(server: server, bannerLine: "Control: \(TerminalText.escaped(path)) (proxyapp replay, send, tui act through it)")
        } catch {
            return ControlEndpoint(server: nil, bannerLine: "Control channel off: \(TerminalText.escaped("\(error)"))")
        }
    }
}

extension TUIActionResult {
    /// A control reply as the TUI's status line says it: the last line (the summary) or the error.
    init(_ reply: ControlReply) {
        self.init(ok: reply.ok, message: reply.ok ? (reply.lines.last ?? "done") : (reply.error ?? "failed"))
    }
}
