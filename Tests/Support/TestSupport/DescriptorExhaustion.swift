#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs code while this process can open no descriptor at all, for tests of what a component
/// does when descriptors run out (every `open`, `socket` and `dup` fails with `EMFILE`).
///
/// The soft `RLIMIT_NOFILE` is lowered to the lowest descriptor number free now: every number
/// below it is in use, so the next one cannot be given out. Descriptors open stay usable, and
/// the limit is put back before this returns. Nothing else of the process should open files
/// meanwhile (tests run one at a time), and `body` must not wait on anything that needs one.
public enum DescriptorExhaustion {
    /// Whether descriptors really ran out inside `body` (a probe `dup` failed with `EMFILE`),
    /// and what `body` returned.
    public static func run<Result>(_ body: () throws -> Result) rethrows -> (exhausted: Bool, result: Result) {
        var saved = rlimit()
        getrlimit(resource, &saved)
        let lowestFree = dup(0)
        guard lowestFree >= 0 else { return (false, try body()) }
        close(lowestFree)
        var lowered = saved
        lowered.rlim_cur = rlim_t(lowestFree)
        guard setrlimit(resource, &lowered) == 0 else { return (false, try body()) }
        defer { setrlimit(resource, &saved) }
        let probe = dup(0)
        let exhausted = probe < 0 && errno == EMFILE
        if probe >= 0 { close(probe) }
        return (exhausted, try body())
    }

    #if canImport(Glibc)
    private static let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    #else
    private static let resource = RLIMIT_NOFILE
    #endif
}
