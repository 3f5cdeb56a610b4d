import ArgumentParser
import Foundation
import ProxyModel

/// The `--data-dir` option every subcommand shares, resolved the same way everywhere:
/// the flag, else `$PROXYAPP_HOME`, else `~/.proxyapp` (`~` is `$HOME`).
struct DataDirectoryOptions: ParsableArguments {
    @Option(name: .customLong("data-dir"),
            help: "Where ProxyApp keeps its capture and settings (default: $PROXYAPP_HOME, else ~/.proxyapp).")
    var dataDir: String?

    var directory: URL {
        if let dataDir { return URL(fileURLWithPath: Self.expandTilde(dataDir)) }
        if let home = ProcessInfo.processInfo.environment["PROXYAPP_HOME"], !home.isEmpty {
            return URL(fileURLWithPath: Self.expandTilde(home))
        }
        return URL(fileURLWithPath: HomeDirectory.path).appendingPathComponent(".proxyapp")
    }

    /// The capture database inside the data directory.
    var databasePath: String {
        directory.appendingPathComponent("traffic.sqlite").path
    }

    private static func expandTilde(_ path: String) -> String {
        HomeDirectory.expandingTilde(path)
    }
}
