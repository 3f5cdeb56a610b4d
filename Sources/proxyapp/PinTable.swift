import Foundation
import ProxyModel

/// Renders the pins as the table `proxyapp pins list` prints, one row per host and client:
/// columns as wide as their longest value, the (long) reason last so lines stay readable when
/// they wrap. Hosts and reasons come from client handshakes: shown escaped (`TerminalText`).
enum PinTable {
    /// The whole table with a header, or a one-line notice when nothing is pinned; each line
    /// ends with a newline.
    static func render(_ pins: [PinnedDomain], ttl: TimeInterval, now: Date, timeZone: TimeZone = .current) -> String {
        if pins.isEmpty { return "No pinned hosts.\n" }
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm"
        formatter.timeZone = timeZone
        formatter.locale = Locale(identifier: "en_US_POSIX")
        let rows = [["HOST", "CLIENT", "COUNT", "FIRST SEEN", "LAST SEEN", "EXPIRES", "REASON"]] + pins.map { pin in
            [TerminalText.escaped(pin.host), TerminalText.escaped(pin.clientText), String(pin.count), formatter.string(from: pin.firstSeen), formatter.string(from: pin.lastSeen),
             pin.isExpired(ttl: ttl, now: now) ? "expired" : formatter.string(from: pin.expiry(ttl: ttl)),
             TerminalText.escaped(pin.reason)]
        }
        let widths = (0..<rows[0].count).map { column in rows.map { $0[column].count }.max() ?? 0 }
        return rows.map { row in
            zip(row, widths).enumerated().map { index, cell in
                index == row.count - 1 ? cell.0 : cell.0.padding(toLength: cell.1, withPad: " ", startingAt: 0)
            }.joined(separator: "  ") + "\n"
        }.joined()
    }
}
