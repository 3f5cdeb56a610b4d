import Foundation
import ProxyModel

/// What one line of the flow list shows, derived once from a `Flow`.
///
/// The list never draws a `Flow` directly: the texts here are computed when a window of rows is
/// loaded, so rendering a frame is only copying strings into the grid, and the derivation rules
/// (status text, default ports, human sizes) are tested apart from the layout.
public struct FlowRow: Sendable, Hashable {
    public var id: Int64?
    public var kind: FlowKind
    /// Start time as `HH:mm:ss.SSS` in the time zone the row was made for.
    public var time: String
    public var method: String
    /// `h1`, `h2`, or `ws` for a WebSocket (a `101` upgrade); empty for a tunnel.
    public var protocolName: String
    /// The status code, `…` while pending, `ERR` for a failed exchange, `TUN` for a tunnel.
    public var status: String
    /// The status code when a response arrived: what the colour is chosen by.
    public var statusCode: Int?
    /// Host, with `:port` when the port is not the scheme's default.
    public var host: String
    /// The path and query (the host has its own column); the note (if any) for a tunnel.
    public var path: String
    /// The whole URL (`https://api.example.com/v1/users?page=2`), `host:port` for a tunnel: what the
    /// status line shows for the selected row.
    public var url: String
    /// The response media type without parameters (`application/json`); empty when unknown; for
    /// a WebSocket, its message count (`12 messages`).
    public var contentType: String
    /// Response body size (bytes up and down for a tunnel or a WebSocket) as `1.2 KiB`; empty while pending.
    public var size: String
    /// `41 ms`, `1.2 s`; empty while the flow is unfinished.
    public var duration: String
    /// A tunnel that was passed through because the host pins its certificates.
    public var pinned: Bool
    public var marked: Bool
    /// Some rule acted on the flow (`Flow.appliedRules` is not empty).
    public var ruleApplied: Bool
    /// The proxy sent this flow again from another (`Flow.replayOf`).
    public var replayed: Bool
    public var error: String?
    /// The proxy that captured the flow, in a shared capture (`Flow.proxyName`); nil in a local one.
    public var proxy: String?

    public init(_ flow: Flow, timeZone: TimeZone) {
        id = flow.id
        proxy = flow.proxyName
        kind = flow.kind
        time = Self.clockTime(flow.startedAt, timeZone: timeZone)
        method = flow.method
        protocolName = Self.protocolName(flow)
        statusCode = flow.status
        if flow.error != nil {
            status = "ERR"
        } else if flow.kind == .tunnel {
            status = "TUN"
        } else {
            status = flow.status.map { String($0) } ?? "…"
        }
        host = Self.hostText(flow)
        switch flow.kind {
        case .tunnel: path = flow.note ?? ""
        case .http: path = flow.path
        }
        url = flow.kind == .tunnel ? "\(flow.urlHost):\(flow.port)" : flow.url
        contentType = Self.essence(of: flow.responseHeaders.first(named: "Content-Type") ?? "")
        switch flow.kind {
        case .tunnel: size = Self.humanSize(flow.bytesUp + flow.bytesDown)
        case .http: size = flow.status == nil ? "" : Self.humanSize(flow.responseBody.size)
        }
        if protocolName == "ws" {  // what a WebSocket carried: its messages and bytes both ways
            contentType = "\(flow.messageCount) message\(flow.messageCount == 1 ? "" : "s")"
            size = Self.humanSize(flow.bytesUp + flow.bytesDown)
        }
        duration = flow.durationMilliseconds.map(Self.humanDuration) ?? ""
        // "pinned HOST for CLIENT: …" (ClientTLSObserver.pinnedNote); "not pinned: …" is not.
        pinned = flow.note?.hasPrefix("pinned") ?? false
        marked = flow.marked
        ruleApplied = !flow.appliedRules.isEmpty
        replayed = flow.replayOf != nil
        error = flow.error
    }

    /// `HH:mm:ss.SSS` by arithmetic rather than a `DateFormatter`: no locale, and cheap enough to
    /// run for every row of a page.
    static func clockTime(_ date: Date, timeZone: TimeZone) -> String {
        let local = date.timeIntervalSince1970 + Double(timeZone.secondsFromGMT(for: date))
        let millisecondsPerDay: Int64 = 86_400_000
        var milliseconds = Int64((local * 1000).rounded(.down)) % millisecondsPerDay
        if milliseconds < 0 { milliseconds += millisecondsPerDay }
        let hours = milliseconds / 3_600_000
        let minutes = milliseconds / 60_000 % 60
        let seconds = milliseconds / 1000 % 60
        return "\(padded(hours, 2)):\(padded(minutes, 2)):\(padded(seconds, 2)).\(padded(milliseconds % 1000, 3))"
    }

    static func protocolName(_ flow: Flow) -> String {
        guard flow.kind == .http else { return "" }
        if flow.status == 101 { return "ws" }
        return flow.httpVersion.hasPrefix("HTTP/2") ? "h2" : "h1"
    }

    static func hostText(_ flow: Flow) -> String {
        let defaultPort: Int
        switch flow.kind {
        case .tunnel: defaultPort = 443
        case .http: defaultPort = flow.scheme == "https" ? 443 : 80
        }
        return flow.port == defaultPort ? flow.urlHost : "\(flow.urlHost):\(flow.port)"
    }

    /// `application/json; charset=utf-8` → `application/json`.
    static func essence(of contentType: String) -> String {
        let type = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return type.trimmingCharacters(in: .whitespaces).lowercased()
    }

    /// Bytes below 1 KiB exactly (`512 B`), then one decimal in binary units (`1.2 KiB`).
    public static func humanSize(_ bytes: Int64) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        var value = Double(bytes) / 1024
        for unit in ["KiB", "MiB", "GiB"] {
            if value < 1024 || unit == "GiB" { return "\(oneDecimal(value)) \(unit)" }
            value /= 1024
        }
        return "\(oneDecimal(value)) GiB"
    }

    /// Whole milliseconds below a second (`41 ms`), seconds with one decimal above (`1.2 s`).
    public static func humanDuration(_ milliseconds: Double) -> String {
        if milliseconds < 999.5 { return "\(Int(max(0, milliseconds).rounded())) ms" }
        return "\(oneDecimal(milliseconds / 1000)) s"
    }

    private static func oneDecimal(_ value: Double) -> String {
        let tenths = Int64((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10)"
    }

    private static func padded(_ value: Int64, _ digits: Int) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
