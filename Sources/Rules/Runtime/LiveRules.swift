import Foundation

/// The rules in force, swapped whole when the file is reloaded.
///
/// The engine reads `current` once per request or tunnel and keeps that snapshot for the rest
/// of it, so a reload never changes the rules under an exchange in flight. Reads take a lock
/// for a pointer copy; nothing else happens under it.
public final class LiveRules: @unchecked Sendable {
    private let lock = NSLock()
    private var rules: RuleSet
    private var state: LiveRulesStatus

    public init(_ rules: RuleSet = .empty, source: String? = nil) {
        self.rules = rules
        self.state = LiveRulesStatus(source: source ?? rules.source, enabledRules: rules.enabledCount,
                                     loadedAt: Date(), lastError: nil)
    }

    /// The rules every new exchange starts with.
    public var current: RuleSet {
        lock.lock()
        defer { lock.unlock() }
        return rules
    }

    /// What the header and logs say about the rules.
    public var status: LiveRulesStatus {
        lock.lock()
        defer { lock.unlock() }
        return state
    }

    /// Puts `rules` in force for every exchange that starts from now on.
    public func replace(with rules: RuleSet, source: String?) {
        lock.lock()
        defer { lock.unlock() }
        self.rules = rules
        state = LiveRulesStatus(source: source, enabledRules: rules.enabledCount, loadedAt: Date(), lastError: nil)
    }

    /// A reload failed: the rules in force stay, and the status says why.
    public func reloadFailed(_ message: String) {
        lock.lock()
        defer { lock.unlock() }
        state.lastError = message
    }
}

/// The rules' state in one value: where they came from, how many are on, and the last reload
/// error while the previous rules stay in force.
public struct LiveRulesStatus: Sendable, Equatable {
    public var source: String?
    public var enabledRules: Int
    public var loadedAt: Date
    /// Set when the last reload failed (the previous rules are still in force).
    public var lastError: String?

    /// For the TUI header: `off`, `3 active`, `3 active, reload failed`.
    public var summary: String {
        var text = enabledRules == 0 ? "off" : "\(enabledRules) active"
        if lastError != nil { text += ", reload failed (E: log)" }
        return text
    }
}
