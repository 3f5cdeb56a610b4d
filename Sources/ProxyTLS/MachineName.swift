#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// This machine's host name, for naming the root CA after the machine it was made on. Read with
/// `gethostname` (no DNS lookup, unlike `ProcessInfo.hostName` on some platforms).
public enum MachineName {
    public static var current: String {
        var buffer = [CChar](repeating: 0, count: 256)
        guard gethostname(&buffer, buffer.count - 1) == 0 else { return "unknown host" }
        let name = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return name.isEmpty ? "unknown host" : name
    }
}
