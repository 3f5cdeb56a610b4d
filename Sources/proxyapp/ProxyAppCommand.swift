import ArgumentParser
import CaptureStore

/// The `proxyapp` command: runs the proxy by default; other subcommands read its capture or manage its root CA.
@main
struct ProxyAppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "proxyapp",
        abstract: "An intercepting HTTP and HTTPS proxy that captures every exchange.",
        discussion: """
            Every subcommand takes --data-dir (default: $PROXYAPP_HOME, else ~/.proxyapp), so \
            scripts can point all of them at one capture.
            """,
        version: version,
        subcommands: [RunCommand.self, FlowsCommand.self, ExportCommand.self, ImportCommand.self, PruneCommand.self, SearchCommand.self, ReplayCommand.self, SendCommand.self, TUICommand.self, CACommand.self, PinsCommand.self, RulesCommand.self, QRCommand.self],
        defaultSubcommand: RunCommand.self
    )

    /// This build's version: `proxyapp --version`, and the HAR `creator` of exports.
    static let version = "0.4.0"

    /// ArgumentParser's own `main`, with one change: a capture database failure no command words
    /// itself (a damaged file found in the middle of a search or an export) is printed in words
    /// (`CaptureErrorText`), not as SQLite's message and the SQL it was running.
    static func main() async {
        do {
            var command = try parseAsRoot()
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch where CaptureErrorText.isDatabaseError(error) {
            exit(withError: CLIError("the capture database failed: \(CaptureErrorText.describe(error))."))
        } catch {
            exit(withError: error)
        }
    }
}
