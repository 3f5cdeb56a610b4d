import ArgumentParser
import CaptureStore
import Foundation
import ProxyCore

/// `proxyapp pins`: the hosts the proxy passes through untouched because their clients refuse
/// our certificates (certificate pinning). Lists them, or unpins so they are intercepted again.
struct PinsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pins",
        abstract: "List or remove the hosts passed through untouched because their clients refuse the proxy's certificates.",
        discussion: """
            A client that rejects the proxy's certificate for a host (an app that pins its \
            certificate, or trusts only its own roots) gets that host pinned: its connections are \
            relayed without interception, so the app keeps working. A pin expires --pin-ttl after \
            the host's last failure. A running proxy notices removals within a few seconds.
            """,
        subcommands: [List.self, Remove.self, Clear.self],
        defaultSubcommand: List.self
    )

    /// How long a pin lasts after its host's last failure, unless `--pin-ttl` says otherwise
    /// (here and in `proxyapp run`).
    static let defaultPinTTL = DurationArgument(seconds: 7 * 86_400)
}

extension PinsCommand {
    /// `proxyapp pins list` (the default): the pinned hosts as a table, read-only.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the pinned hosts.")

        @OptionGroup var data: DataDirectoryOptions

        @Option(name: .customLong("pin-ttl"),
                help: "How long a pin lasts after the host's last failure, to show when it expires: 7d, 12h, 30m, 3600s or seconds.")
        var pinTTL: DurationArgument = PinsCommand.defaultPinTTL

        func run() throws {
            let pins = try data.openExistingCapture().pinnedDomains()
            print(PinTable.render(pins, ttl: pinTTL.timeInterval, now: Date()), terminator: "")
        }
    }

    /// `proxyapp pins remove HOST`: unpins one host.
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unpin a host: the proxy intercepts it again.")

        @OptionGroup var data: DataDirectoryOptions

        @Argument(help: "The host to unpin, as `proxyapp pins list` shows it (any case).")
        var host: String

        func validate() throws {
            guard !host.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ValidationError("HOST must not be empty.")
            }
        }

        func run() throws {
            let repository = try data.openExistingCapture(forWriting: true)
            guard try repository.removePin(host: host) else {
                throw CLIError("\(host) is not pinned. `proxyapp pins list` shows the pinned hosts.")
            }
            print("Unpinned \(HostName.normalized(host)): the proxy intercepts it again.")
        }
    }

    /// `proxyapp pins clear`: unpins every host.
    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unpin every host.")

        @OptionGroup var data: DataDirectoryOptions

        func run() throws {
            let removed = try data.openExistingCapture(forWriting: true).removeAllPins()
            print(removed == 0 ? "No host was pinned." : "Unpinned \(removed) host\(removed == 1 ? "" : "s").")
        }
    }
}
