#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The process's open-file limit (`RLIMIT_NOFILE`): every client and upstream connection, the
/// capture database and each DNS lookup hold a descriptor, so it bounds how many connections
/// the proxy can serve at once (`ConnectionBudget`).
public enum DescriptorLimit {
    /// What raising the soft limit did.
    public enum Raise: Equatable, Sendable {
        /// The soft limit already equalled the hard one (or the hard one is unlimited and the
        /// soft one is not worth touching).
        case unchanged(Int)
        case raised(from: Int, to: Int)
        /// `setrlimit` refused; the limit stays at `current`.
        case failed(current: Int, wanted: Int, reason: String)

        /// The soft limit in force afterwards.
        public var current: Int {
            switch self {
            case .unchanged(let value), .raised(_, let value), .failed(let value, _, _): value
            }
        }

        /// One line for the start banner, nil when nothing changed.
        public var bannerLine: String? {
            switch self {
            case .unchanged: nil
            case .raised(let from, let to): "Open-file limit raised from \(from) to \(to) (the hard limit)."
            case .failed(let current, let wanted, let reason):
                "Open-file limit stays at \(current): raising it to \(wanted) failed (\(reason))."
            }
        }
    }

    /// The soft limit now; `Int.max` when unlimited.
    public static var soft: Int {
        var limit = rlimit()
        guard getrlimit(resourceNumber, &limit) == 0 else { return 1024 }
        return count(limit.rlim_cur)
    }

    /// Raises the soft limit to the hard limit. Never throws: a proxy that cannot raise it still
    /// runs, with a smaller connection budget.
    public static func raiseSoftToHard() -> Raise {
        var limit = rlimit()
        guard getrlimit(resourceNumber, &limit) == 0 else {
            return .failed(current: 1024, wanted: 1024, reason: "getrlimit: \(String(cString: strerror(errno)))")
        }
        let before = count(limit.rlim_cur)
        var wanted = limit.rlim_max
        #if canImport(Darwin)
        // Darwin refuses a soft limit above OPEN_MAX even when the hard one is unlimited.
        wanted = min(wanted, rlim_t(OPEN_MAX))
        #endif
        guard limit.rlim_cur < wanted else { return .unchanged(before) }
        limit.rlim_cur = wanted
        guard setrlimit(resourceNumber, &limit) == 0 else {
            return .failed(current: before, wanted: count(wanted), reason: String(cString: strerror(errno)))
        }
        return .raised(from: before, to: count(wanted))
    }

    private static func count(_ value: rlim_t) -> Int {
        // RLIM_INFINITY (all ones on Linux, Int64.max on Darwin) does not import into Swift.
        value >= rlim_t(Int.max) ? Int.max : Int(value)
    }

    #if canImport(Glibc)
    private static let resourceNumber = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resourceNumber = RLIMIT_NOFILE
    #endif
}
