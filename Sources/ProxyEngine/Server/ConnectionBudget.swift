/// How many client connections, and how many idle upstream connections, the proxy may hold at
/// once, so that a flood is answered `503` instead of running the process out of descriptors.
///
/// The formula, from the open-file limit `L` (after `DescriptorLimit.raiseSoftToHard`):
/// - `reserved` = 64 descriptors for everything that is not a connection: stdio, the capture
///   database with its WAL and SHM, the log, the rules file, the listening socket, each event
///   loop's epoll and wake-up descriptors, DNS sockets and map-local files on the thread pool.
/// - a proxied exchange holds two: the client connection and its upstream one (a tunnel too);
/// - the idle upstream pool holds `maxIdleUpstream` = max(M / 4, one per loop) more.
/// So `2 M + M / 4 + reserved ≤ L`, and by default `M = (L − 64) × 4 / 9` (L = 1024: 426 clients,
/// 106 idle upstream connections; L = 128: 28 and 7).
///
/// Pure: `ProxyServer` feeds it the limit and the number of event loops.
public struct ConnectionBudget: Equatable, Sendable {
    public static let reserved = 64

    /// The open-file limit this budget was derived from.
    public let descriptorLimit: Int
    /// Client connections served at once (`--max-connections`); one more is answered 503.
    public let maxConnections: Int
    /// Idle upstream connections kept for reuse, all event loops together.
    public let maxIdleUpstream: Int
    /// The share of `maxIdleUpstream` each event loop's pool may keep (rounded up).
    public let maxIdleUpstreamPerLoop: Int
    /// Whether `maxConnections` came from `--max-connections` rather than the formula.
    public let isExplicit: Bool

    /// - Parameters:
    ///   - maxConnections: an explicit limit; nil derives it from `descriptorLimit`.
    ///   - maxIdleUpstream: an explicit idle pool size; nil derives it from `maxConnections`.
    public init(descriptorLimit: Int, maxConnections: Int? = nil, maxIdleUpstream: Int? = nil, eventLoops: Int) {
        // Beyond 2^30 descriptors nothing changes in practice, and the arithmetic stays exact.
        let limit = min(max(descriptorLimit, 0), 1 << 30)
        self.descriptorLimit = descriptorLimit
        self.isExplicit = maxConnections != nil
        let connections = max(1, maxConnections ?? (limit - Self.reserved) * 4 / 9)
        self.maxConnections = connections
        let loops = max(1, eventLoops)
        let idle = max(maxIdleUpstream ?? max(loops, connections / 4), 0)
        self.maxIdleUpstream = idle
        self.maxIdleUpstreamPerLoop = idle / loops + (idle % loops == 0 ? 0 : 1)
    }

    /// Descriptors the proxy may need at its peak under this budget.
    public var descriptorsNeeded: Int {
        let connections = min(maxConnections, 1 << 30)
        return 2 * connections + min(maxIdleUpstream, 1 << 30) + Self.reserved
    }

    /// Whether the peak fits the open-file limit; when it does not, accepting pauses on EMFILE
    /// (new connections wait in the listen backlog) before the 503 limit is reached.
    public var fitsDescriptorLimit: Bool {
        descriptorsNeeded <= descriptorLimit
    }

    /// The start banner's line about connections (and a warning when the limit does not fit).
    public var bannerLines: String {
        let source = isExplicit ? "--max-connections" : "from the open-file limit \(descriptorLimit); --max-connections to change"
        var text = "Connections: at most \(maxConnections) clients at once, more get 503 (\(source))\n"
        if !fitsDescriptorLimit {
            text += "warning: --max-connections \(maxConnections) needs about \(descriptorsNeeded) open files but the limit is "
                + "\(descriptorLimit): past that, new connections wait unanswered until others close. "
                + "Raise the limit (ulimit -n) or lower --max-connections.\n"
        }
        return text
    }
}
