import Foundation
import ProxyModel

/// The pinned-domains view (`p`): the hosts the proxy passes through untouched for the clients
/// that pin their certificates (one row per host and client), with a selection so one can be
/// removed (`d`).
public struct PinsViewState: Sendable, Equatable {
    public private(set) var pins: [PinnedDomain]
    public private(set) var selectedIndex: Int?

    public init(pins: [PinnedDomain] = []) {
        self.pins = pins
        selectedIndex = pins.isEmpty ? nil : 0
    }

    public var selected: PinnedDomain? { selectedIndex.map { pins[$0] } }

    /// New contents (after a reload or a removal), keeping the selection on the same pin when
    /// it is still there.
    public mutating func replace(_ pins: [PinnedDomain]) {
        let key = selected?.key
        self.pins = pins
        if pins.isEmpty {
            selectedIndex = nil
        } else if let key, let index = pins.firstIndex(where: { $0.key == key }) {
            selectedIndex = index
        } else {
            selectedIndex = min(selectedIndex ?? 0, pins.count - 1)
        }
    }

    public mutating func move(by delta: Int) {
        guard !pins.isEmpty else { return }
        selectedIndex = min(max(0, (selectedIndex ?? 0) + delta), pins.count - 1)
    }
}

/// Draws the pinned-domains view: host, client, reason, failures seen, last seen, and when the pin expires.
public enum PinsRenderer {
    public static func render(_ state: PinsViewState, ttl: TimeInterval, timeZone: TimeZone, size: ScreenSize,
                              message: StatusMessage?) -> ScreenGrid {
        var grid = ScreenGrid(width: size.width, height: size.height)
        guard size.height > 0, size.width > 0 else { return grid }
        let bar = CellStyle(reverse: true)
        grid.fill(row: 0, style: bar)
        let count = state.pins.count
        grid.put("ProxyApp  pinned domains: \(count) (passed through without decryption)", row: 0, column: 0, style: bar)
        guard size.height > 2 else { return grid }
        let hostWidth = max(12, min(40, size.width / 4))
        let clientStart = hostWidth + 2
        // Address and fingerprint: 46 columns with an IPv4 address; cut on narrow screens.
        let clientWidth = max(10, min(48, size.width / 4))
        let reasonStart = clientStart + clientWidth + 2
        let expiresWidth = 16
        let reasonWidth = max(0, size.width - reasonStart - expiresWidth - 2)
        let title = CellStyle(bold: true, underline: true)
        grid.put("HOST", row: 1, column: 0, style: title)
        grid.put("CLIENT", row: 1, column: clientStart, style: title)
        grid.put("REASON", row: 1, column: reasonStart, style: title)
        grid.put("EXPIRES", row: 1, column: size.width - expiresWidth, style: title)
        if state.pins.isEmpty {
            grid.put("No pinned domains: every CONNECT host is decrypted.", row: 2, column: 0, style: CellStyle(dim: true))
        }
        let visible = max(0, size.height - 3)
        let selected = state.selectedIndex ?? 0
        let first = max(0, selected - visible + 1)
        for offset in 0..<visible where first + offset < count {
            let index = first + offset
            let pin = state.pins[index]
            let row = 2 + offset
            grid.put(ColumnText.fitted(pin.host, width: hostWidth), row: row, column: 0)
            grid.put(ColumnText.fitted(pin.clientText, width: clientWidth), row: row, column: clientStart)
            let reason = "\(pin.reason) (\(pin.count)×, last \(FlowRow.clockTime(pin.lastSeen, timeZone: timeZone)))"
            grid.put(ColumnText.fitted(reason, width: reasonWidth), row: row, column: reasonStart)
            grid.put(dateText(pin.expiry(ttl: ttl), timeZone: timeZone), row: row, column: size.width - expiresWidth)
            if index == state.selectedIndex { grid.restyle(row: row) { $0.reverse = true } }
        }
        let status = size.height - 1
        var column = 0
        if let message {
            column = grid.put(message.text, row: status, column: 0,
                              style: message.kind == .error ? CellStyle(foreground: .red, bold: true) : .plain) + 2
        }
        let hint = "d remove pin  q back"
        if size.width - hint.count > column { grid.put(hint, row: status, column: size.width - hint.count, style: CellStyle(dim: true)) }
        return grid
    }

    /// `2026-11-29 14:05`, in `timeZone`, without a locale.
    static func dateText(_ date: Date, timeZone: TimeZone) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        func two(_ value: Int?) -> String { value.map { $0 < 10 ? "0\($0)" : "\($0)" } ?? "??" }
        return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute))"
    }
}
