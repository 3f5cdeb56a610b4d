#if canImport(Glibc) && (arch(x86_64) || arch(arm64))
import Glibc

/// Unmaps the pages of the read-only segments of the binary and of its libraries (code and
/// constants) that are still the file's own pages; the kernel maps each one back from the page
/// cache, where it stays, when it is touched again.
///
/// Why: starting touches much code that never runs again (options, the database's set-up and
/// migrations, the CA, the banner), and for each page touched the kernel maps the pages around
/// it too (fault-around, 64 KiB). Of the 44.9 MiB resident once `proxyapp run` listened, 38.9 MiB
/// were such pages; released, about 6 MiB stayed mapped at once, and 25 MiB after the bench's
/// loads, where 39 had stayed before. `IdlePageRelease` runs this after start and when the
/// capture has been idle a while. The cost: each page touched again faults once (the first HTTPS
/// request after a release took 1–3 ms longer).
///
/// Which pages: the loaded objects are walked with `dl_iterate_phdr`, which holds the dynamic
/// loader's lock, so no segment can be unmapped (and its addresses reused) while it is worked
/// on; only segments without write permission (`PT_LOAD` without `PF_W`), and in them only the
/// pages the pagemap reports present and file-backed. A page the process wrote (a text
/// relocation, a debugger's breakpoint) is its own copy, anonymous: unmapping it would bring
/// back the file's bytes, so it is kept; the same check covers a segment's last page when the
/// next, writable segment shares it. Without a readable /proc/self/pagemap nothing is
/// unmapped. Files mapped by other means (none in the proxy today) are left alone.
enum ReadOnlyFilePages {
    static let pageSize = UInt(sysconf(Int32(_SC_PAGESIZE)))

    /// Releases what it can and returns the number of pages unmapped (0 when the pagemap cannot
    /// be read).
    @discardableResult
    static func release(pagemapPath: String = "/proc/self/pagemap") -> Int {
        let pagemap = open(pagemapPath, O_RDONLY | O_CLOEXEC)
        guard pagemap >= 0 else { return 0 }
        defer { close(pagemap) }
        var walk = SegmentWalk { range in release(range, pagemap: pagemap) }
        walk.run()
        return walk.released
    }

    /// The read-only segments of every loaded object, as address ranges (page-aligned).
    static func loadedReadOnlySegments() -> [Range<UInt>] {
        var segments: [Range<UInt>] = []
        var walk = SegmentWalk { range in
            segments.append(range)
            return 0
        }
        walk.run()
        return segments
    }

    /// Unmaps the present, file-backed pages of `range` (page-aligned; pages of a mapping that
    /// cannot be written while this runs) and returns how many.
    static func release(_ range: Range<UInt>, pagemap: Int32) -> Int {
        let chunkPages = 4_096
        return withUnsafeTemporaryAllocation(of: UInt64.self, capacity: chunkPages) { entries in
            var released = 0
            var page = range.lowerBound / pageSize
            let endPage = range.upperBound / pageSize
            while page < endPage {
                let count = Int(min(UInt(chunkPages), endPage - page))
                let bytes = pread(pagemap, entries.baseAddress, count * 8, off_t(page * 8))
                guard bytes == count * 8 else { break }  // unreadable: leave the rest
                for run in releasableRuns(UnsafeBufferPointer(rebasing: entries[0..<count])) {
                    let address = UnsafeMutableRawPointer(bitPattern: (page + UInt(run.lowerBound)) * pageSize)
                    if madvise(address, run.count * Int(pageSize), MADV_DONTNEED) == 0 {
                        released += run.count
                    }
                }
                page += UInt(count)
            }
            return released
        }
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
}

/// One walk of the loaded objects' read-only `PT_LOAD` segments, calling `visit` for each under
/// the loader's lock (`visit` must not load or unload libraries) and summing what it returns.
///
/// glibc's `dl_iterate_phdr` and its structures (<link.h>, <elf.h>) are not in Swift's Glibc
/// module, and a C module defining `_GNU_SOURCE` clashes with it: they are declared here, for
/// 64-bit Linux (the layouts below).
private struct SegmentWalk {
    let visit: (Range<UInt>) -> Int
    var released = 0

    /// `int dl_iterate_phdr(int (*)(struct dl_phdr_info *, size_t, void *), void *)`.
    @_silgen_name("dl_iterate_phdr")
    private static func iterateLoadedObjects(
        _ callback: @convention(c) (UnsafeRawPointer?, Int, UnsafeMutableRawPointer?) -> Int32,
        _ data: UnsafeMutableRawPointer?) -> Int32

    // struct dl_phdr_info: dlpi_addr (8 bytes), dlpi_name, dlpi_phdr, dlpi_phnum (2 bytes).
    private static let objectBase = 0, objectName = 8, objectHeaders = 16, objectHeaderCount = 24
    // Elf64_Phdr (56 bytes): p_type, p_flags (4 bytes each), p_offset, p_vaddr, p_paddr, p_filesz, p_memsz…
    private static let headerSize = 56, headerType = 0, headerFlags = 4, headerAddress = 16, headerMemorySize = 40
    private static let loadable: UInt32 = 1  // PT_LOAD
    private static let writable: UInt32 = 2  // PF_W

    init(_ visit: @escaping (Range<UInt>) -> Int) {
        self.visit = visit
    }

    mutating func run() {
        _ = withUnsafeMutablePointer(to: &self) { walk in
            Self.iterateLoadedObjects({ info, _, data in
                guard let info, let walk = data?.assumingMemoryBound(to: SegmentWalk.self) else { return 0 }
                walk.pointee.visitSegments(of: info)
                return 0
            }, walk)
        }
    }

    private mutating func visitSegments(of object: UnsafeRawPointer) {
        // The kernel's vDSO is no file: its pages are the kernel's own.
        if let name = object.load(fromByteOffset: Self.objectName, as: UnsafePointer<CChar>?.self),
           strncmp(name, "linux-vdso", 10) == 0 || strncmp(name, "linux-gate", 10) == 0 {
            return
        }
        guard let headers = object.load(fromByteOffset: Self.objectHeaders, as: UnsafeRawPointer?.self) else { return }
        let base = UInt(object.load(fromByteOffset: Self.objectBase, as: UInt64.self))
        let count = Int(object.load(fromByteOffset: Self.objectHeaderCount, as: UInt16.self))
        let pageSize = ReadOnlyFilePages.pageSize
        for index in 0..<count {
            let header = headers + index * Self.headerSize
            guard header.load(fromByteOffset: Self.headerType, as: UInt32.self) == Self.loadable,
                  header.load(fromByteOffset: Self.headerFlags, as: UInt32.self) & Self.writable == 0 else { continue }
            let address = base &+ UInt(header.load(fromByteOffset: Self.headerAddress, as: UInt64.self))
            let size = UInt(header.load(fromByteOffset: Self.headerMemorySize, as: UInt64.self))
            guard size > 0 else { continue }
            let start = address / pageSize * pageSize
            let end = (address &+ size &+ pageSize &- 1) / pageSize * pageSize
            released += visit(start..<end)
        }
    }
}
#else
/// Elsewhere than 64-bit Linux, nothing is released.
enum ReadOnlyFilePages {
    @discardableResult
    static func release() -> Int { 0 }
}
#endif
