import Dispatch
import Foundation
import NIOConcurrencyHelpers

/// Leaves by host for the TLS handshakes of intercepted connections, asked for on NIO event loops.
/// A hit completes at once on the caller's thread; a miss mints on a queue this cache owns (never
/// on an event loop), and a host is minted once however many handshakes race for it: later
/// callers wait for the first mint (single flight). At most `capacity` leaves are kept, the least
/// recently used forgotten first; a leaf within a day of its notAfter is minted again.
public final class LeafCertificateCache: Sendable {
    /// A leaf closer than this to its notAfter is minted again rather than served.
    public static let renewalMargin: TimeInterval = 86_400

    public typealias Completion = @Sendable (Result<MintedLeaf, any Error>) -> Void

    private struct State: Sendable {
        var leaves: LeastRecentlyUsedCache<String, MintedLeaf>
        /// Callers waiting for a mint in flight, by host; the first entry started the mint.
        var waiting: [String: [Completion]] = [:]
    }

    private let state: NIOLockedValueBox<State>
    private let mint: @Sendable (_ host: String, _ now: Date) throws -> MintedLeaf
    private let clock: @Sendable () -> Date
    private let queue = DispatchQueue(label: "ProxyTLS.LeafCertificateCache", qos: .userInitiated, attributes: .concurrent)

    /// `capacity` (at least 1) bounds the leaves kept; each is a few KiB.
    public convenience init(minter: LeafCertificateMinter, capacity: Int = 1024) {
        self.init(capacity: capacity, clock: { Date() }, mint: { host, now in try minter.mint(host: host, now: now) })
    }

    /// For tests: any mint function (to count or delay mints) and any clock.
    init(capacity: Int, clock: @escaping @Sendable () -> Date,
         mint: @escaping @Sendable (_ host: String, _ now: Date) throws -> MintedLeaf) {
        self.state = NIOLockedValueBox(State(leaves: LeastRecentlyUsedCache(capacity: capacity)))
        self.mint = mint
        self.clock = clock
    }

    /// How many leaves are cached (not counting mints in flight).
    public var count: Int {
        state.withLockedValue { $0.leaves.count }
    }

    /// Calls `completion` exactly once with the leaf for `host` (case-insensitive; `[::1]` and
    /// `::1` are one host): at once on this thread for a cached leaf or an invalid host, else
    /// from the minting queue.
    public func leaf(for host: String, completion: @escaping Completion) {
        let key: String
        do { key = try LeafHost(parsing: host).name } catch {
            completion(.failure(error))
            return
        }
        let now = clock()
        enum Step { case served(MintedLeaf), waiting, mintNeeded }
        let step = state.withLockedValue { state -> Step in
            if let leaf = state.leaves.value(for: key) {
                if leaf.notAfter.timeIntervalSince(now) > Self.renewalMargin { return .served(leaf) }
                state.leaves.removeValue(for: key)
            }
            if state.waiting[key] != nil {
                state.waiting[key]!.append(completion)
                return .waiting
            }
            state.waiting[key] = [completion]
            return .mintNeeded
        }
        switch step {
        case .served(let leaf):
            completion(.success(leaf))
        case .waiting:
            break
        case .mintNeeded:
            queue.async {
                let result = Result { try self.mint(key, self.clock()) }
                self.finishMint(of: key, with: result)
            }
        }
    }

    private func finishMint(of key: String, with result: Result<MintedLeaf, any Error>) {
        let waiting = state.withLockedValue { state -> [Completion] in
            if case .success(let leaf) = result { state.leaves.insert(leaf, for: key) }
            return state.waiting.removeValue(forKey: key) ?? []
        }
        for completion in waiting { completion(result) }
    }
}
