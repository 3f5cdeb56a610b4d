import ProxyModel

/// The clients that have shown they trust the proxy's CA (they completed an intercepted
/// handshake), bounded: the auto-pin policy pins only for these.
///
/// Two generations of at most `capacity / 2` clients each: an insert goes into the current one,
/// and when it is full it becomes the previous one (the old previous is forgotten). So at most
/// `capacity` clients are held, a client is remembered for at least `capacity / 2` newer ones,
/// and a client seen again moves to the current generation: least-recently-used eviction in
/// O(1), without a list. A flood of fingerprints (one machine can make any number) only evicts
/// older clients; their next rejection is then noted, not pinned, until they complete a
/// handshake again — interception goes on, which is the safe side.
///
/// Memory only, on purpose: a client that trusts the CA shows it again on its first intercepted
/// handshake after a restart (any host), and the clients of stored pins are loaded as trusted
/// (`AutoPinPolicy.load`), so a pinning app that only ever talks to its pinned hosts is still
/// trusted after a restart.
struct TrustedClients: Sendable {
    let capacity: Int
    private var current: Set<ClientIdentity> = []
    private var previous: Set<ClientIdentity> = []

    init(capacity: Int) {
        precondition(capacity >= 2, "the trusted clients need room for two at least")
        self.capacity = capacity
    }

    var count: Int { current.count + previous.count }

    func contains(_ client: ClientIdentity) -> Bool {
        current.contains(client) || previous.contains(client)
    }

    /// Remembers `client` as the most recent.
    mutating func insert(_ client: ClientIdentity) {
        guard !current.contains(client) else { return }
        previous.remove(client)
        if current.count >= capacity / 2 {
            previous = current
            current = []
        }
        current.insert(client)
    }
}
