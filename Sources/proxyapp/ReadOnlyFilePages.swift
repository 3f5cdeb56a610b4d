#if canImport(Glibc)
import Glibc

/// Unmaps the pages of the process's read-only file mappings (the code and constants of the
/// binary and of its libraries) that are still the file's own pages; the kernel maps each one
/// back from the page cache, where it stays, when it is touched again.
///
/// Why: starting touches much code that never runs again (options, the database's set-up and
/// migrations, the CA, the banner), and for each page touched the kernel maps the pages around
/// it too (fault-around, 64 KiB). Of the 44.9 MiB resident once `proxyapp run` listened, 38.9 MiB
/// were such pages; released, 4.9 MiB came back at once and 25 MiB after every bench load, where
/// they had stayed at 39. `IdlePageRelease` runs this after start and when the capture has been
/// idle a while. The cost: each page touched again faults once (the first HTTPS request after a
/// release took 1–3 ms longer).
///
/// Which pages: in mappings of a file without write permission, only those the pagemap reports
/// present and file-backed. A page of a private mapping that was written (relocations, before
/// the loader made it read-only; a debugger's breakpoint) is the process's own copy, anonymous:
/// unmapping it would bring back the file's bytes, so it is kept, and a read-only page cannot
/// be written between the check and the unmapping. Without a readable /proc/self/pagemap nothing
/// is unmapped.
enum ReadOnlyFilePages {
    /// One line of /proc/self/maps that may hold releasable pages: a file mapped without write
    /// permission.
    struct Mapping: Equatable {
        var start: UInt
        var end: UInt
    }

    /// Releases what it can and returns the number of pages unmapped (0 when the pagemap or the
    /// maps cannot be read).
    @discardableResult
    static func release(mapsPath: String = "/proc/self/maps", pagemapPath: String = "/proc/self/pagemap") -> Int {
        guard let text = readWholeFile(mapsPath) else { return 0 }
        let pagemap = open(pagemapPath, O_RDONLY | O_CLOEXEC)
        guard pagemap >= 0 else { return 0 }
        defer { close(pagemap) }
        let pageSize = UInt(sysconf(Int32(_SC_PAGESIZE)))
        let chunkPages = 4_096
        let entries = UnsafeMutableBufferPointer<UInt64>.allocate(capacity: chunkPages)
        defer { entries.deallocate() }
        var released = 0
        for mapping in mappings(in: text) {
            var page = mapping.start / pageSize
            let endPage = mapping.end / pageSize
            while page < endPage {
                let count = Int(min(UInt(chunkPages), endPage - page))
                let bytes = pread(pagemap, entries.baseAddress, count * 8, off_t(page * 8))
                guard bytes == count * 8 else { break }  // unreadable: leave the rest of this mapping
                for run in releasableRuns(UnsafeBufferPointer(rebasing: entries[0..<count])) {
                    let address = UnsafeMutableRawPointer(bitPattern: (page + UInt(run.lowerBound)) * pageSize)
                    if madvise(address, run.count * Int(pageSize), MADV_DONTNEED) == 0 {
                        released += run.count
                    }
                }
                page += UInt(count)
            }
        }
        return released
    }

    /// The mappings of a maps file's `text` that may hold releasable pages: readable, not
    /// writable, and backed by a file (the path starts with "/"; not `[vdso]`, `[heap]` or an
    /// anonymous mapping). Lines it cannot read are skipped.
    static func mappings(in text: String) -> [Mapping] {
        var found: [Mapping] = []
        for line in text.split(separator: "\n") {
            // start-end perms offset device inode [path]
            // (the path is padded with spaces, and may hold spaces of its own).
            let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
            guard fields.count == 6, fields[5].drop(while: { $0 == " " }).first == "/" else { continue }
            let perms = Array(fields[1].utf8)
            guard perms.count == 4, perms[0] == UInt8(ascii: "r"), perms[1] == UInt8(ascii: "-") else { continue }
            let bounds = fields[0].split(separator: "-")
            guard bounds.count == 2, let start = UInt(bounds[0], radix: 16), let end = UInt(bounds[1], radix: 16),
                  start < end else { continue }
            found.append(Mapping(start: start, end: end))
        }
        return found
    }

    /// Runs of page indices in `entries` (pagemap entries, one per page) that are present and
    /// file-backed: bit 63 (present) and bit 61 (file page or shared anonymous) set.
    static func releasableRuns(_ entries: UnsafeBufferPointer<UInt64>) -> [Range<Int>] {
        let wanted: UInt64 = 1 << 63 | 1 << 61
        var runs: [Range<Int>] = []
        var runStart: Int?
        for (index, entry) in entries.enumerated() {
            if entry & wanted == wanted {
                if runStart == nil { runStart = index }
            } else if let start = runStart {
                runs.append(start..<index)
                runStart = nil
            }
        }
        if let start = runStart { runs.append(start..<entries.count) }
        return runs
    }

    /// The bytes of a /proc file (its size is unknown until read), as text; nil if it cannot be opened.
    private static func readWholeFile(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
#else
enum ReadOnlyFilePages {
    @discardableResult
    static func release() -> Int { 0 }
}
#endif
