/// A dictionary with a capacity that forgets the entry used least recently when it overflows.
/// Lookups and inserts below capacity are O(1); an insert at capacity scans for the oldest entry,
/// which for ~1000 leaves costs a few µs against the ≈ 50 µs of the mint that preceded it.
/// Public for the engine's cache of TLS server contexts (`ServerContextCache`).
public struct LeastRecentlyUsedCache<Key: Hashable, Value> {
    private var entries: [Key: (value: Value, lastUse: UInt64)] = [:]
    private var useCounter: UInt64 = 0
    public let capacity: Int

    public init(capacity: Int) {
        precondition(capacity > 0, "a cache needs room for at least one entry")
        self.capacity = capacity
    }

    public var count: Int { entries.count }

    /// The value for `key`, which becomes the most recently used.
    public mutating func value(for key: Key) -> Value? {
        guard let entry = entries[key] else { return nil }
        useCounter += 1
        entries[key] = (entry.value, useCounter)
        return entry.value
    }

    /// Stores `value` as the most recently used, evicting the least recently used entry if full.
    public mutating func insert(_ value: Value, for key: Key) {
        if entries[key] == nil, entries.count >= capacity,
           let oldest = entries.min(by: { $0.value.lastUse < $1.value.lastUse })?.key {
            entries.removeValue(forKey: oldest)
        }
        useCounter += 1
        entries[key] = (value, useCounter)
    }

    public mutating func removeValue(for key: Key) {
        entries.removeValue(forKey: key)
    }

    public func contains(_ key: Key) -> Bool {
        entries[key] != nil
    }
}

extension LeastRecentlyUsedCache: Sendable where Key: Sendable, Value: Sendable {}
