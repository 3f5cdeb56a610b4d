import Foundation

/// What identifies a version of a file without reading it: the rules file's watcher (RulesFile)
/// and the resolver's watch on resolv.conf and /etc/hosts (ProxyEngine) compare these.
public struct FileSignature: Equatable, Sendable {
    let inode: UInt64
    let size: Int64
    let modified: Int64

    public init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        inode = UInt64(info.st_ino)
        size = Int64(info.st_size)
        #if canImport(Darwin)
        modified = Int64(info.st_mtimespec.tv_sec) * 1_000_000_000 + Int64(info.st_mtimespec.tv_nsec)
        #else
        modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
        #endif
    }
}
