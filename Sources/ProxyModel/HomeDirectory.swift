import Foundation

/// The user's home directory as their shell sees it, for `~/.proxyapp` and every `~/…` path a
/// user types. swift-corelibs-foundation's `homeDirectoryForCurrentUser` reads the password
/// database and ignores `$HOME`, so `HOME=/tmp/try proxyapp` still wrote into the account's real
/// home; every other tool (and mitmproxy) honours `$HOME`.
public enum HomeDirectory {
    /// `$HOME` when it is an absolute path, else the account's home from the password database.
    public static var path: String { path(environment: ProcessInfo.processInfo.environment) }

    public static func path(environment: [String: String]) -> String {
        if let home = environment["HOME"], home.hasPrefix("/") {
            var trimmed = Substring(home)
            while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
            return String(trimmed)
        }
        return FileManager.default.homeDirectoryForCurrentUser.path
    }

    /// `path` with a leading `~` or `~/` replaced by the home directory; anything else unchanged
    /// (`~user` is not expanded: it names another account).
    public static func expandingTilde(_ path: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        guard path == "~" || path.hasPrefix("~/") else { return path }
        let home = Self.path(environment: environment)
        return home == "/" && path.hasPrefix("~/") ? String(path.dropFirst()) : home + path.dropFirst()
    }
}
