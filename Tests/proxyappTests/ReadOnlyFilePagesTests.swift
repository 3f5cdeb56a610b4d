#if canImport(Glibc)
import Foundation
import Glibc
import TestSupport
import XCTest

@testable import proxyapp

/// The release of read-only file pages: which maps lines and pagemap entries it takes, and, on
/// this process, that it unmaps the file's own pages and never a page the process wrote.
final class ReadOnlyFilePagesTests: XCTestCase {
    private let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    // MARK: maps lines

    func testOnlyReadableUnwritableFileMappingsAreTaken() {
        let text = """
        55d0c0a00000-55d0c0b00000 r--p 00000000 08:01 131 /usr/bin/proxyapp
        55d0c0b00000-55d0c0c00000 r-xp 00100000 08:01 131 /usr/bin/proxyapp
        55d0c0c00000-55d0c0c10000 rw-p 00200000 08:01 131 /usr/bin/proxyapp
        55d0c0c10000-55d0c0c20000 ---p 00210000 08:01 131 /usr/bin/proxyapp
        55d0c1000000-55d0c1100000 rw-p 00000000 00:00 0                          [heap]
        7f0000000000-7f0000001000 r--p 00000000 00:00 0
        7f0000001000-7f0000002000 r--s 00000000 08:01 77                         /tmp/shared map (deleted)
        7ffd00000000-7ffd00002000 r-xp 00000000 00:00 0                          [vdso]
        7f0000003000-7f0000002000 r--p 00000000 08:01 78 /backwards
        not a mapping line
        zzzz-7f0000004000 r--p 00000000 08:01 79 /bad/start
        """
        XCTAssertEqual(ReadOnlyFilePages.mappings(in: text), [
            .init(start: 0x55d0_c0a0_0000, end: 0x55d0_c0b0_0000),
            .init(start: 0x55d0_c0b0_0000, end: 0x55d0_c0c0_0000),
            .init(start: 0x7f00_0000_1000, end: 0x7f00_0000_2000),
        ])
    }

    // MARK: pagemap entries

    func testRunsAreThePresentFileBackedPages() {
        let file: UInt64 = 1 << 63 | 1 << 61 | 0x1234  // present, file page (a frame number)
        let anonymous: UInt64 = 1 << 63 | 0x99  // present, the process's own copy
        let swapped: UInt64 = 1 << 62
        let entries: [UInt64] = [file, file, anonymous, 0, file, swapped, 1 << 61, file, file, file]
        let runs = entries.withUnsafeBufferPointer { ReadOnlyFilePages.releasableRuns($0) }
        XCTAssertEqual(runs, [0..<2, 4..<5, 7..<10])
        XCTAssertEqual([UInt64]().withUnsafeBufferPointer { ReadOnlyFilePages.releasableRuns($0) }, [])
    }

    // MARK: on this process

    func testTheFilesPagesAreUnmappedAndReadBackUnchanged() throws {
        try withMappedFile(pages: 8, protection: PROT_READ, sharing: MAP_PRIVATE) { base, contents in
            XCTAssertEqual(try presentPages(base, pages: 8), Array(repeating: true, count: 8))

            XCTAssertGreaterThanOrEqual(ReadOnlyFilePages.release(), 8)

            XCTAssertEqual(try presentPages(base, pages: 8), Array(repeating: false, count: 8), "the pages are unmapped")
            XCTAssertEqual(Data(bytes: base, count: 8 * pageSize), contents, "read again from the file")
        }
    }

    /// The safety rule: a page of a private mapping that the process wrote (as the loader writes
    /// relocations, then makes them read-only) holds bytes the file does not; it stays.
    func testAPageTheProcessWroteIsKeptEvenOnceReadOnly() throws {
        try withMappedFile(pages: 4, protection: PROT_READ | PROT_WRITE, sharing: MAP_PRIVATE) { base, contents in
            base.storeBytes(of: 0xAB, toByteOffset: pageSize + 7, as: UInt8.self)  // page 1 becomes the process's copy
            XCTAssertEqual(mprotect(base, 4 * pageSize, PROT_READ), 0)

            ReadOnlyFilePages.release()

            XCTAssertEqual(try presentPages(base, pages: 4), [false, true, false, false])
            var expected = contents
            expected[pageSize + 7] = 0xAB
            XCTAssertEqual(Data(bytes: base, count: 4 * pageSize), expected, "the written byte survives")
        }
    }

    func testAWritableMappingIsLeftAlone() throws {
        try withMappedFile(pages: 2, protection: PROT_READ | PROT_WRITE, sharing: MAP_SHARED) { base, _ in
            ReadOnlyFilePages.release()
            XCTAssertEqual(try presentPages(base, pages: 2), [true, true])
        }
    }

    func testWithoutAPagemapNothingIsUnmapped() throws {
        try withMappedFile(pages: 2, protection: PROT_READ, sharing: MAP_PRIVATE) { base, _ in
            XCTAssertEqual(ReadOnlyFilePages.release(pagemapPath: "/nonexistent/pagemap"), 0)
            XCTAssertEqual(ReadOnlyFilePages.release(mapsPath: "/nonexistent/maps"), 0)
            XCTAssertEqual(try presentPages(base, pages: 2), [true, true])
        }
    }

    /// Descriptors running out: the maps or the pagemap cannot be opened, so nothing is
    /// unmapped.
    func testDescriptorsRunningOutUnmapNothing() throws {
        try withMappedFile(pages: 2, protection: PROT_READ, sharing: MAP_PRIVATE) { base, _ in
            let (exhausted, released) = DescriptorExhaustion.run { ReadOnlyFilePages.release() }
            XCTAssertTrue(exhausted)
            XCTAssertEqual(released, 0)
            XCTAssertEqual(try presentPages(base, pages: 2), [true, true])
        }
    }

    // MARK: helpers

    /// Maps a new file of `pages` pages of varied bytes, touches every page, and runs `body`
    /// with the mapping and the file's bytes.
    private func withMappedFile(pages: Int, protection: Int32, sharing: Int32,
                                _ body: (UnsafeMutableRawPointer, Data) throws -> Void) throws {
        let (descriptor, contents) = try makeFile(pages: pages)
        defer { close(descriptor) }
        let base = try XCTUnwrap(mmap(nil, pages * pageSize, protection, sharing, descriptor, 0))
        guard base != MAP_FAILED else { return XCTFail("mmap: errno \(errno)") }
        defer { munmap(base, pages * pageSize) }
        var sum: UInt8 = 0
        for page in 0..<pages { sum &+= base.load(fromByteOffset: page * pageSize, as: UInt8.self) }
        withExtendedLifetime(sum) {}
        try body(base, contents)
    }

    /// An unlinked temporary file of `pages` pages of varied bytes, open for reading and writing.
    private func makeFile(pages: Int) throws -> (Int32, Data) {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("rofp-\(UUID().uuidString)").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        XCTAssertGreaterThanOrEqual(descriptor, 0)
        unlink(path)
        let contents = Data((0..<(pages * pageSize)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 12) })
        let written = contents.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
        XCTAssertEqual(written, contents.count)
        return (descriptor, contents)
    }

    /// Whether each page is mapped in this process now (pagemap bit 63); reading does not fault.
    private func presentPages(_ base: UnsafeMutableRawPointer, pages: Int) throws -> [Bool] {
        let pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)
        guard pagemap >= 0 else { throw XCTSkip("/proc/self/pagemap cannot be read here") }
        defer { close(pagemap) }
        var entries = [UInt64](repeating: 0, count: pages)
        let offset = off_t(UInt(bitPattern: base) / UInt(pageSize) * 8)
        let count = entries.withUnsafeMutableBytes { pread(pagemap, $0.baseAddress, $0.count, offset) }
        XCTAssertEqual(count, pages * 8)
        return entries.map { $0 >> 63 == 1 }
    }
}
#endif
