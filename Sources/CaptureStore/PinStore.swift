import Foundation
import ProxyModel

/// Where pinned hosts are kept: the local capture's `pinned_domains` (`TrafficRepository`) or
/// the shared store's `proxyapp_pins` (`PostgresPinStore` in SharedCapture), so that every proxy
/// writing one shared capture also passes through the hosts any of them pinned.
///
/// `PersistentPinRegistry` keeps pins in memory and saves and re-reads them here; `proxyapp
/// pins` and the TUI's pins view list and remove them. Every method blocks on I/O.
public protocol PinStore: Sendable {
    /// Where the pins are, for messages: a file path or a redacted URL.
    var pinStoreDescription: String { get }
    /// Every stored pin, expired ones included, ordered by host, then client.
    func pinnedDomains() throws -> [PinnedDomain]
    /// Every stored pin and the change count they belong to, read together.
    func pinnedDomainsAndChangeCount() throws -> (pins: [PinnedDomain], changeCount: Int64)
    /// How many inserts, updates and deletes the pins have seen: equal counts mean equal pins.
    func pinChangeCount() throws -> Int64
    /// Stores `pins` (each replacing the pin of its host and client) and removes those keyed
    /// `keys`, in one transaction; the change count before and after.
    @discardableResult
    func applyPinChanges(saving pins: [PinnedDomain], removing keys: [PinnedDomain.Key]) throws
        -> (before: Int64, after: Int64)
    /// Removes the pins of `host` (as stored, `HostName.normalized`) for every client, or for
    /// those connecting from `clientAddress` (an IP; a port is ignored); how many went.
    @discardableResult
    func removePins(host: String, clientAddress: String?) throws -> Int
    /// Removes one pin; false when there was none.
    @discardableResult
    func removePin(_ key: PinnedDomain.Key) throws -> Bool
    /// Removes every pin; how many there were.
    @discardableResult
    func removeAllPins() throws -> Int
    /// Removes the pins whose last failure is at or before `cutoff`; how many went.
    @discardableResult
    func removePins(expiredBefore cutoff: Date) throws -> Int
}

extension TrafficRepository: PinStore {
    public var pinStoreDescription: String { database.path }
}
