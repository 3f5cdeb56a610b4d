/// What the flow list's header bar reports about the running proxy: given by the app, which
/// knows the listener, the CA and the store; the renderer only lays it out.
public struct HeaderInfo: Sendable, Hashable {
    /// `127.0.0.1:8080`; empty when the TUI only reads a database.
    public var listenAddress: String
    /// Where clients fetch the CA certificate; empty when not served.
    public var caURL: String
    public var flowCount: Int
    /// The view filter; empty for none.
    public var filter: String
    /// The rules state as shown (`off`, `3 active`); empty leaves it out (a TUI reading a
    /// capture another process writes does not know that process's rules).
    public var rules: String
    /// The throttle in force (`3g`, `1mbit down, …`); empty when none.
    public var throttle: String
    /// The breakpoint filter in force; empty when none.
    public var intercept: String
    /// Exchanges held at breakpoints now.
    public var held: Int

    public init(listenAddress: String = "", caURL: String = "", flowCount: Int = 0, filter: String = "",
                rules: String = "off", throttle: String = "", intercept: String = "", held: Int = 0) {
        self.intercept = intercept
        self.held = held
        self.listenAddress = listenAddress
        self.caURL = caURL
        self.flowCount = flowCount
        self.filter = filter
        self.rules = rules
        self.throttle = throttle
    }

    /// `ProxyApp  listening 127.0.0.1:8080  CA http://…  1,234 flows  filter: ~d api  rules: off`.
    public var text: String {
        var parts = ["ProxyApp"]
        if !listenAddress.isEmpty { parts.append("listening \(listenAddress)") }
        if !caURL.isEmpty { parts.append("CA \(caURL)") }
        parts.append("\(NumberText.grouped(flowCount)) \(flowCount == 1 ? "flow" : "flows")")
        // Exchanges waiting for a person come first: a long filter cut at the edge never hides them.
        if held > 0 { parts.append("HELD: \(held)") }
        if !filter.isEmpty { parts.append("filter: \(filter)") }
        if !rules.isEmpty { parts.append("rules: \(rules)") }
        if !throttle.isEmpty { parts.append("throttle: \(throttle)") }
        if !intercept.isEmpty { parts.append("intercept: \(intercept)") }
        return parts.joined(separator: "  ")
    }

    /// `text`, leaving out the CA URL when all does not fit in `width` columns: the flow count,
    /// the filter and the rules state (`reload failed (E: log)`) matter more on a narrow screen,
    /// and the CA page is on the `i` screen.
    public func text(width: Int) -> String {
        let full = text
        guard DisplayWidth.of(full) > width, !caURL.isEmpty else { return full }
        var shorter = self
        shorter.caURL = ""
        return shorter.text
    }
}

/// A one-line message for the status line: an error (a bad filter) or a notice (export saved).
public struct StatusMessage: Sendable, Hashable {
    public enum Kind: Sendable, Hashable { case info, error }
    public var kind: Kind
    public var text: String

    public init(_ kind: Kind, _ text: String) {
        self.kind = kind
        self.text = text
    }
}

/// Numbers as the UI writes them, independent of the process locale.
public enum NumberText {
    /// `1234567` → `1,234,567`.
    public static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var result = ""
        for (offset, digit) in digits.enumerated() {
            if offset > 0, (digits.count - offset) % 3 == 0 { result.append(",") }
            result.append(digit)
        }
        return value < 0 ? "-" + result : result
    }
}
