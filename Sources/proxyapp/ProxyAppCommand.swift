import ArgumentParser

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
}
