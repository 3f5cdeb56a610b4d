#if canImport(Glibc)
import Glibc
#endif

/// Names the capture writer's thread `proxyapp-writer` from inside it, so `top -H` and `perf`
/// show it by name. Foundation's `Thread.name`, set before the thread starts, did not reach
/// the system thread on Linux (it showed as a dispatch worker's name). Linux takes at most 15
/// bytes: a longer name is refused, not cut.
enum CaptureThreadName {
    #if os(Linux)
    @_silgen_name("pthread_setname_np")
    private static func setThreadName(_ thread: pthread_t, _ name: UnsafePointer<CChar>) -> Int32
    #endif

    static func apply() {
        #if os(Linux)
        _ = setThreadName(pthread_self(), "proxyapp-writer")
        #endif
    }
}
