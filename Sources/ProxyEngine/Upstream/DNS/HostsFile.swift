import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `/etc/hosts` as a table, read once per change, so a lookup costs a dictionary hit.
///
/// c-ares 1.18 opens and parses the file for every lookup on the resolver's one thread: with a
/// 4 MB block list (100,000 lines) that was ~6 ms a lookup, so a few thousand fresh names held
/// every other lookup for seconds. The table answers as glibc's `files` source does: every
/// address of every line naming the host (canonical name or alias, any case, a trailing dot
/// ignored), in the file's order, IPv4 and IPv6; lines whose address does not parse are skipped.
struct HostsFile {
    /// The largest file read; a bigger one is read up to here (its last line may be cut).
    static let maximumBytes = 64 << 20
    /// Addresses kept per name; more in the file are ignored.
    static let maximumAddressesPerName = 64

    private var table: [String: [SocketAddress]] = [:]

    /// The table of `text`, a hosts file's contents.
    init(parsing text: some Collection<UInt8>) {
        for line in text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true) {
            let content = line.prefix { $0 != UInt8(ascii: "#") }
            let fields = content.split { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: "\r") }
            guard fields.count > 1,
                  let address = try? SocketAddress(ipAddress: String(decoding: fields[0], as: UTF8.self), port: 0) else {
                continue
            }
            for field in fields.dropFirst() {
                var name = String(decoding: field, as: UTF8.self).lowercased()
                if name.hasSuffix(".") { name.removeLast() }
                guard !name.isEmpty else { continue }
                var addresses = table[name, default: []]
                guard addresses.count < Self.maximumAddressesPerName, !addresses.contains(address) else { continue }
                addresses.append(address)
                table[name] = addresses
            }
        }
    }

    /// The table of the file at `path`; empty when it is missing, unreadable or not a regular
    /// file (a FIFO there must not hold the resolver's thread).
    static func load(path: String) -> HostsFile {
        let descriptor = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard descriptor >= 0 else { return HostsFile(parsing: []) }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { return HostsFile(parsing: []) }
        var bytes = [UInt8](repeating: 0, count: min(Int(info.st_size), maximumBytes))
        var filled = 0
        while filled < bytes.count {
            let start = filled
            let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + start, $0.count - start) }
            guard count > 0 else { break }
            filled += count
        }
        return HostsFile(parsing: bytes[..<filled])
    }

    /// The addresses listed for `name` (lower case, no trailing dot), port 0; nil when none.
    func addresses(of name: String) -> [SocketAddress]? {
        table[name]
    }
}
