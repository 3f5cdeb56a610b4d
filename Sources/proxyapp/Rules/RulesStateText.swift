import Rules

/// The rules state in one line, as the start-up banner, the banner printed after the TUI quits
/// and the TUI's `i` screen say it: the same words from the same facts.
enum RulesStateText {
    /// `Rules: 4 active from PATH (…)`, `Rules: none (create PATH …)`, or the failed reload.
    static func line(enabled: Int, source: String?, lastError: String?, path: String) -> String {
        if let lastError {
            let reason = lastError.split(separator: "\n", omittingEmptySubsequences: true).first.map(String.init) ?? ""
            return "Rules: \(enabled) active; the last reload of \(source ?? path) failed, the previous rules stay in force: \(reason)"
        }
        guard source != nil || enabled > 0 else {
            return "Rules: none (create \(path) to add some; it is picked up while the proxy runs)"
        }
        return "Rules: \(enabled) active from \(source ?? path) (edits are reloaded while the proxy runs)"
    }

    static func line(_ status: LiveRulesStatus, path: String) -> String {
        line(enabled: status.enabledRules, source: status.source, lastError: status.lastError, path: path)
    }
}
