import Foundation
import ProxyModel

/// The Timing/TLS tab: when and how long, each phase with a waterfall bar, the connection's
/// addresses and counters, the rules that acted on it, and what was negotiated on both TLS legs.
enum TimingPage {
    static let labelWidth = 16
    static let barWidth = 40

    static func lines(_ flow: Flow, timeZone: TimeZone) -> [DetailLine] {
        var lines: [DetailLine] = []
        lines.append(field("Started", DetailTime.dateTime(flow.startedAt, timeZone: timeZone), indent: false))
        lines.append(field("Duration", flow.durationMilliseconds.map(FlowRow.humanDuration) ?? "unfinished", indent: false))
        lines.append(.blank)
        lines += phases(flow.timings)
        lines.append(.blank)
        lines.append(section("Connection"))
        if let proxy = flow.proxyName { lines.append(field("Proxy", proxy)) }  // a shared capture's
        lines.append(field("Client", flow.clientAddress.isEmpty ? "–" : flow.clientAddress))
        let origin = "\(flow.urlHost):\(flow.port)"
        lines.append(field("Server", flow.serverAddress.map { "\(origin) (\($0))" } ?? origin))
        lines.append(field("HTTP version", flow.httpVersion))
        if flow.bytesUp != 0 || flow.bytesDown != 0 {
            lines.append(field("Bytes", "up \(FlowRow.humanSize(flow.bytesUp)), down \(FlowRow.humanSize(flow.bytesDown))"))
        }
        if let note = flow.note { lines.append(field("Note", note)) }
        if !flow.appliedRules.isEmpty { lines.append(field("Rules", flow.appliedRules.joined(separator: ", "))) }
        if let error = flow.error { lines.append(field("Error", error, style: CellStyle(foreground: .red, bold: true))) }
        lines.append(.blank)
        lines += tls(flow.tls)
        return lines
    }

    private static func phases(_ timings: FlowTimings) -> [DetailLine] {
        // A hold at a breakpoint (a person deciding) comes first, as HAR's `blocked` does, and
        // only when there was one.
        let held: [(String, Double, TerminalColor)] = timings.hold >= 0 ? [("Held", timings.hold, .red)] : []
        let phases: [(String, Double, TerminalColor)] = held + [
            ("DNS", timings.dns, .cyan), ("Connect", timings.connect, .yellow), ("TLS", timings.tls, .magenta),
            ("Send", timings.send, .green), ("Wait", timings.wait, .blue), ("Receive", timings.receive, .green),
        ]
        let total = phases.reduce(0) { $0 + max(0, $1.1) }
        var lines = [section("Phases")]
        var elapsed = 0.0
        for (name, value, color) in phases {
            let label = "  " + name.padding(toLength: labelWidth - 2, withPad: " ", startingAt: 0)
            let number = milliseconds(value)
            var runs: [DetailLine.Run] = [.init(text: label, style: .plain),
                                          .init(text: String(repeating: " ", count: max(0, 9 - number.count)) + number + "  ",
                                                style: .plain)]
            if value >= 0, total > 0 {
                let start = Int((elapsed / total * Double(barWidth)).rounded())
                let end = max(start + 1, Int(((elapsed + value) / total * Double(barWidth)).rounded()))
                runs.append(.init(text: String(repeating: "·", count: start), style: CellStyle(dim: true)))
                runs.append(.init(text: String(repeating: "█", count: end - start), style: CellStyle(foreground: color)))
                elapsed += value
            }
            lines.append(DetailLine(runs))
        }
        return lines
    }

    private static func tls(_ details: TLSDetails?) -> [DetailLine] {
        guard let details, !details.isEmpty else { return [field("TLS", "none", indent: false)] }
        var lines = [section("TLS, client side")]
        lines.append(field("Version", details.clientVersion ?? "–"))
        if let cipher = details.clientCipher { lines.append(field("Cipher", cipher)) }
        lines.append(field("ALPN", details.alpn ?? "–"))
        lines.append(field("SNI", details.sni ?? "none sent"))
        lines.append(section("TLS, server side"))
        lines.append(field("Version", details.upstreamVersion ?? "–"))
        if let cipher = details.upstreamCipher { lines.append(field("Cipher", cipher)) }
        lines.append(field("Subject", details.upstreamSubject ?? "–"))
        lines.append(field("Issuer", details.upstreamIssuer ?? "–"))
        lines.append(field("Expires", details.upstreamNotAfter.map { DetailTime.date($0) } ?? "–"))
        return lines
    }

    /// `–` for a phase that did not happen, one decimal below 10 ms, whole ms, then seconds.
    static func milliseconds(_ value: Double) -> String {
        if value < 0 { return "–" }
        if value < 9.95 {
            let tenths = Int((value * 10).rounded())
            return "\(tenths / 10).\(tenths % 10) ms"
        }
        return FlowRow.humanDuration(value)
    }

    private static func section(_ title: String) -> DetailLine {
        DetailLine(title, CellStyle(foreground: .cyan, bold: true))
    }

    private static func field(_ label: String, _ value: String, indent: Bool = true, style: CellStyle = .plain) -> DetailLine {
        let shown = (indent ? "  " + label : label).padding(toLength: labelWidth, withPad: " ", startingAt: 0)
        return DetailLine([.init(text: shown, style: CellStyle(bold: true)), .init(text: value, style: style)])
    }
}

/// Dates as the detail view writes them, locale-free: `2026-11-22 09:05:03.042 +00:00`.
enum DetailTime {
    static func dateTime(_ date: Date, timeZone: TimeZone) -> String {
        let offset = timeZone.secondsFromGMT(for: date)
        let sign = offset < 0 ? "-" : "+"
        let minutes = abs(offset) / 60
        let zone = "\(sign)\(padded(minutes / 60)):\(padded(minutes % 60))"
        return "\(day(date, offset: offset)) \(FlowRow.clockTime(date, timeZone: timeZone)) \(zone)"
    }

    /// The UTC calendar day: `2027-02-01 UTC`.
    static func date(_ date: Date) -> String {
        "\(day(date, offset: 0)) UTC"
    }

    /// `yyyy-MM-dd` of `date` in the zone `offset` seconds east of UTC (Gregorian, no locale).
    private static func day(_ date: Date, offset: Int) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(secondsFromGMT: offset) ?? TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return "\(parts.year ?? 0)-\(padded(parts.month ?? 0))-\(padded(parts.day ?? 0))"
    }

    private static func padded(_ value: Int) -> String {
        value < 10 ? "0\(value)" : "\(value)"
    }
}
