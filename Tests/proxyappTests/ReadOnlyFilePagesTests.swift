#if canImport(Glibc) && (arch(x86_64) || arch(arm64))
import Foundation
import Glibc
import TestSupport
import XCTest

@testable import proxyapp

/// The release of read-only file pages: which pagemap entries it takes, that it unmaps a file's
/// own pages and never a page the process wrote, and which segments of this process it walks.
final class ReadOnlyFilePagesTests: XCTestCase {
    private let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

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

    // MARK: a range

    func testTheFilesPagesAreUnmappedAndReadBackUnchanged() throws {
        try withMappedFile(pages: 8, protection: PROT_READ, sharing: MAP_PRIVATE) { base, contents in
            XCTAssertEqual(try presentPages(base, pages: 8), Array(repeating: true, count: 8))

            XCTAssertEqual(try release(base, pages: 8), 8)

            XCTAssertEqual(try presentPages(base, pages: 8), Array(repeating: false, count: 8), "the pages are unmapped")
            XCTAssertEqual(Data(bytes: base, count: 8 * pageSize), contents, "read again from the file")
        }
    }

    /// The safety rule: a page of a private mapping that the process wrote (as a text relocation
    /// or a debugger's breakpoint does) holds bytes the file does not; it stays.
    func testAPageTheProcessWroteIsKeptEvenOnceReadOnly() throws {
        try withMappedFile(pages: 4, protection: PROT_READ | PROT_WRITE, sharing: MAP_PRIVATE) { base, contents in
            base.storeBytes(of: 0xAB, toByteOffset: pageSize + 7, as: UInt8.self)  // page 1 becomes the process's copy
            XCTAssertEqual(mprotect(base, 4 * pageSize, PROT_READ), 0)

            XCTAssertEqual(try release(base, pages: 4), 3)

            XCTAssertEqual(try presentPages(base, pages: 4), [false, true, false, false])
            var expected = contents
            expected[pageSize + 7] = 0xAB
            XCTAssertEqual(Data(bytes: base, count: 4 * pageSize), expected, "the written byte survives")
        }
    }

    func testPagesNeverTouchedAreNotCounted() throws {
        try withMappedFile(pages: 4, protection: PROT_READ, sharing: MAP_PRIVATE, touching: false) { base, _ in
            XCTAssertEqual(try release(base, pages: 4), 0)
        }
    }

    // MARK: this process's loaded objects

    /// Code of a library (libc's `strlen`) is in a read-only segment; a writable global of the
    /// same library (`environ`) is not.
    func testTheLoadedReadOnlySegmentsHoldCodeAndNotWritableData() throws {
        let segments = ReadOnlyFilePages.loadedReadOnlySegments()
        let code = UInt(bitPattern: try XCTUnwrap(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "strlen")))
        let data = UInt(bitPattern: try XCTUnwrap(dlsym(UnsafeMutableRawPointer(bitPattern: 0), "environ")))
        XCTAssertTrue(segments.contains { $0.contains(code) })
        XCTAssertFalse(segments.contains { $0.contains(data) })
        XCTAssertTrue(segments.allSatisfy { $0.lowerBound % UInt(pageSize) == 0 && $0.upperBound % UInt(pageSize) == 0 })
    }

    /// The whole release on this process: pages go, and everything still runs (the test goes on,
    /// calling code that was unmapped).
    func testReleasingThisProcessUnmapsPagesAndItRunsOn() {
        XCTAssertGreaterThan(ReadOnlyFilePages.release(), 0)
        XCTAssertEqual(strlen("still running"), 13)
        XCTAssertEqual(String(describing: [1, 2, 3]), "[1, 2, 3]")
    }

    func testWithoutAPagemapNothingIsUnmapped() {
        XCTAssertEqual(ReadOnlyFilePages.release(pagemapPath: "/nonexistent/pagemap"), 0)
    }

    /// Descriptors running out: the pagemap cannot be opened, so nothing is unmapped.
    func testDescriptorsRunningOutUnmapNothing() {
        let (exhausted, released) = DescriptorExhaustion.run { ReadOnlyFilePages.release() }
        XCTAssertTrue(exhausted)
        XCTAssertEqual(released, 0)
    }

    // MARK: helpers

    /// Maps a new file of `pages` pages of varied bytes, touches every page (unless told not to), and runs `body`
    /// with the mapping and the file's bytes.
    private func withMappedFile(pages: Int, protection: Int32, sharing: Int32, touching: Bool = true,
                                _ body: (UnsafeMutableRawPointer, Data) throws -> Void) throws {
        let (descriptor, contents) = try makeFile(pages: pages)
        defer { close(descriptor) }
        let base = try XCTUnwrap(mmap(nil, pages * pageSize, protection, sharing, descriptor, 0))
        guard base != MAP_FAILED else { return XCTFail("mmap: errno \(errno)") }
        defer { munmap(base, pages * pageSize) }
        var sum: UInt8 = 0
        for page in 0..<pages where touching { sum &+= base.load(fromByteOffset: page * pageSize, as: UInt8.self) }
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

    /// `ReadOnlyFilePages.release(_:pagemap:)` on `pages` pages from `base`.
    private func release(_ base: UnsafeMutableRawPointer, pages: Int) throws -> Int {
        let pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)
        guard pagemap >= 0 else { throw XCTSkip("/proc/self/pagemap cannot be read here") }
        defer { close(pagemap) }
        let start = UInt(bitPattern: base)
        return ReadOnlyFilePages.release(start..<start + UInt(pages * pageSize), pagemap: pagemap)
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
