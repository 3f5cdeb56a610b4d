import ArgumentParser
import CaptureStore
import Foundation
import ProxyCore
import SharedCapture

/// `proxyapp pins`: the hosts the proxy passes through untouched for the clients that refuse our
/// certificates for them (certificate pinning). Lists them, or unpins so they are intercepted again.
struct PinsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pins",
        abstract: "List or remove the hosts passed through untouched because their clients refuse the proxy's certificates.",
        discussion: """
            A client that has completed a handshake with the proxy before (so it trusts the CA) \
            and then rejects the proxy's certificate for a host (an app that pins its \
            certificate) gets that host pinned for itself: its connections there are relayed \
            without interception, so the app keeps working, while other clients are still \
            intercepted. A client is its address and a fingerprint of its TLS ClientHello. A \
            client that never completed a handshake pins nothing: it does not trust the CA yet. \
            A pin expires --pin-ttl after its last failure. A running proxy notices removals \
            within a few seconds. Proxies writing one shared store (--store) share their pins: \
            list and remove them with --store from any machine.
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
        @OptionGroup var store: StoreOptions

        @Option(name: .customLong("pin-ttl"),
                help: "How long a pin lasts after the host's last failure, to show when it expires: 7d, 12h, 30m, 3600s or seconds.")
        var pinTTL: DurationArgument = PinsCommand.defaultPinTTL

        func run() throws {
            let pins = try store.openPinStore(data: data, forWriting: false).pinnedDomains()
            print(PinTable.render(pins, ttl: pinTTL.timeInterval, now: Date()), terminator: "")
        }
    }

    /// `proxyapp pins remove HOST [--client ADDRESS]`: unpins one host, for every client or for
    /// the clients at one address.
    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Unpin a host for every client (or those at --client): the proxy intercepts it again.")

        @OptionGroup var data: DataDirectoryOptions
        @OptionGroup var store: StoreOptions

        @Argument(help: "The host to unpin, as `proxyapp pins list` shows it (any case).")
        var host: String

        @Option(name: .customLong("client"),
                help: "Only the pins of clients at this address (the first word of CLIENT in `proxyapp pins list`).")
        var clientAddress: String?

        func validate() throws {
            guard !host.trimmingCharacters(in: .whitespaces).isEmpty else {
                throw ValidationError("HOST must not be empty.")
            }
            if let clientAddress, clientAddress.trimmingCharacters(in: .whitespaces).isEmpty {
                throw ValidationError("--client must name an address, such as 127.0.0.1.")
            }
        }

        func run() throws {
            let repository = try store.openPinStore(data: data, forWriting: true)
            let removed = try repository.removePins(host: HostName.normalized(host), clientAddress: clientAddress)
            let whose = clientAddress.map { " for clients at \($0)" } ?? ""
            guard removed > 0 else {
                throw CLIError("\(host) is not pinned\(whose). `proxyapp pins list` shows the pinned hosts.")
            }
            print("Unpinned \(HostName.normalized(host))\(whose) (\(removed) pin\(removed == 1 ? "" : "s")): "
                  + "the proxy intercepts it again.")
        }
    }

    /// `proxyapp pins clear`: unpins every host.
    struct Clear: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unpin every host.")

        @OptionGroup var data: DataDirectoryOptions
        @OptionGroup var store: StoreOptions

        func run() throws {
            let removed = try store.openPinStore(data: data, forWriting: true).removeAllPins()
            print(removed == 0 ? "No host was pinned." : "Removed \(removed) pin\(removed == 1 ? "" : "s").")
        }
    }
}
