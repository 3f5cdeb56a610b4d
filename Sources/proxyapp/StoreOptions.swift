import ArgumentParser
import CaptureStore
import Foundation
import SharedCapture

/// `--store postgres://…` (or `PROXYAPP_STORE`): the capture shared by a team's proxies, which
/// `run` writes to and `flows` reads, instead of `<data-dir>/traffic.sqlite`.
struct StoreOptions: ParsableArguments {
    @Option(name: .customLong("store"), help: ArgumentHelp(
        "A PostgreSQL capture shared by several proxies: postgres://USER:PASSWORD@HOST:PORT/DB "
            + "(default: $PROXYAPP_STORE, else the local capture).",
        valueName: "url"))
    var storeText: String?

    /// The environment variable read when `--store` is not given.
    static let environmentVariable = "PROXYAPP_STORE"

    func validate() throws {
        _ = try address()
    }

    /// The shared store's address; nil for the local capture (no `--store`, no `PROXYAPP_STORE`).
    func address(environment: [String: String] = ProcessInfo.processInfo.environment) throws -> PostgresStoreAddress? {
        let text = storeText ?? environment[Self.environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
        guard let text else { return nil }
        guard PostgresStoreAddress.looksLikePostgres(text) else {
            let source = storeText == nil ? Self.environmentVariable : "--store"
            throw ValidationError("\(source) takes a postgres:// URL (postgres://USER:PASSWORD@HOST:PORT/DB); "
                                  + "the local capture needs none.")
        }
        do {
            return try PostgresStoreAddress(parsing: text)
        } catch {
            throw ValidationError("\(error)")
        }
    }

    /// Connects to the shared store and brings its schema up to date, or says in words why not
    /// and what to do. With `tolerateOutage` (a proxy starting) a store that cannot be reached
    /// only earns a warning on standard error: the capture writer keeps flows and tries again;
    /// a refusal (a wrong password, no such database) is an error either way.
    static func openSession(_ address: PostgresStoreAddress, tolerateOutage: Bool = false) throws -> PostgresSession {
        let session = PostgresSession(address: address)
        let queuedFlows = CaptureWriter.Limits().maxQueuedFlows.formatted()
        do {
            try PostgresFlowReader(session: session).prepare()
        } catch SharedCaptureError.unreachable(let named, let reason) where tolerateOutage {
            FileHandle.standardError.write(Data(("Warning: cannot reach the PostgreSQL store \(named): \(reason). "
                + "Proxying anyway; flows wait in memory (up to \(queuedFlows)) until it answers.\n").utf8))
        } catch {
            throw CLIError("\(error). Check the URL and that the server runs, or drop --store (and "
                           + "\(environmentVariable)) to use the local capture.")
        }
        return session
    }
}

extension StoreOptions {
    /// The capture a reading command works on: the shared store when `--store` (or
    /// `PROXYAPP_STORE`) names one, else the data directory's file; and its name for messages.
    func openFlowStore(data: DataDirectoryOptions) throws -> (store: any FlowStore, name: String) {
        if let address = try address() {
            return (PostgresFlowStore(session: try Self.openSession(address)), address.redacted)
        }
        return (try data.openExistingCapture(), data.databasePath)
    }

    /// The pins a `pins` command works on: the shared store's, or the data directory capture's.
    func openPinStore(data: DataDirectoryOptions, forWriting: Bool) throws -> any PinStore {
        if let address = try address() {
            return PostgresPinStore(session: try Self.openSession(address))
        }
        return try data.openExistingCapture(forWriting: forWriting)
    }
}

/// Where a process that proxies (`run`, the engine of `replay` and `send`) captures, keeps its
/// pins and reads flows back: the data directory's capture, or a shared store. With a shared
/// store each part gets a session of its own (a session serves one thread at a time); opening
/// the writer's brings the schema up to date, and with `tolerateOutage` a server that cannot be
/// reached is only a warning (see `StoreOptions.openSession`).
struct CaptureParts {
    let backend: any CaptureBackend
    let flows: any FlowStore
    let pins: any PinStore

    /// `shared`: the store and this process's name on its flows there; nil for `local`.
    init(local: TrafficRepository, shared: (address: PostgresStoreAddress, name: String)?, tolerateOutage: Bool) throws {
        guard let shared else {
            backend = SQLiteCaptureBackend(repository: local)
            flows = local
            pins = local
            return
        }
        backend = PostgresCaptureBackend(session: try StoreOptions.openSession(shared.address, tolerateOutage: tolerateOutage),
                                         proxyName: shared.name)
        flows = PostgresFlowStore(session: PostgresSession(address: shared.address))
        pins = PostgresPinStore(session: PostgresSession(address: shared.address))
    }
}

/// `run --name`: the name a proxy's flows carry in a shared store (default: the host name).
enum ProxyNameArgument {
    static func validate(_ name: String) throws {
        guard !name.isEmpty, name.count <= 64 else {
            throw ValidationError("--name takes 1 to 64 characters (got \(name.count)).")
        }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control
            || $0.properties.generalCategory == .format }) else {
            throw ValidationError("--name cannot hold control or format characters.")
        }
    }
}
