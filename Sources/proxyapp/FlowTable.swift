import Foundation
import ProxyModel

/// Renders flows as the fixed-width lines `proxyapp flows` prints and `proxyapp run` logs as
/// each flow is stored. The last column holds the path (the full URL for HTTPS), then the
/// flow's note in brackets, the rules that acted on it after `rules:` and its error after `!`.
/// Control and bidi characters in any of them are shown escaped (`TerminalText`).
enum FlowTable {
    static let header = row(id: "ID", time: "TIME", method: "METHOD", status: "STATUS", host: "HOST",
                            path: "PATH", size: "SIZE", duration: "DURATION")

    static func line(for flow: Flow) -> String {
        let status: String
        if let code = flow.status {
            status = String(code)
        } else {
            status = flow.error == nil ? "…" : "ERR"
        }
        let size = flow.kind == .tunnel
            ? ByteCount.format(flow.bytesUp + flow.bytesDown)
            : ByteCount.format(flow.responseBody.size)
        let duration = flow.durationMilliseconds.map { String(format: "%.0f ms", $0) } ?? "-"
        // Decrypted HTTPS shows its whole URL, so it stands apart from plain HTTP at a glance.
        var path = flow.kind == .tunnel ? "(tunnel)" : flow.scheme == "https" ? flow.url : flow.path
        if let note = flow.note { path += "  [" + note + "]" }
        if !flow.appliedRules.isEmpty { path += "  rules: " + flow.appliedRules.joined(separator: ", ") }
        if let error = flow.error { path += "  ! " + error }
        let host = flow.port == (flow.scheme == "https" ? 443 : 80) ? flow.host : "\(flow.host):\(flow.port)"
        // Every text field came from traffic (or a HAR file): escaped, so no byte of it drives the terminal.
        return row(id: flow.id.map { "#\($0)" } ?? "-", time: timeFormatter.string(from: flow.startedAt),
                   method: TerminalText.escaped(flow.method), status: status, host: TerminalText.escaped(host),
                   path: TerminalText.escaped(path), size: size, duration: duration)
    }

    /// The shared capture's lines (`flows --store`): the proxy that captured each flow first.
    static let sharedHeader = pad("PROXY", 12) + " " + header

    static func line(for flow: Flow, proxy: String) -> String {
        pad(TerminalText.escaped(proxy), 12) + " " + line(for: flow)
    }

    private static func row(id: String, time: String, method: String, status: String, host: String,
                            path: String, size: String, duration: String) -> String {
        pad(id, 7) + " " + pad(time, 12) + " " + pad(method, 7) + " " + pad(status, 6) + " "
            + pad(host, 28) + " " + pad(size, 10) + " " + pad(duration, 9) + " " + path
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? String(text.prefix(width)) : text + String(repeating: " ", count: width - text.count)
    }

    private static let timeFormatter: DateFormatter = {
        let formatter = DateFormatter()
        formatter.dateFormat = "HH:mm:ss.SSS"
        return formatter
    }()
}
