import CaptureExport
import CaptureStore
import Foundation
import ProxyModel
import TestSupport
import XCTest

@testable import proxyapp

/// The data directory and every file holding captured data are private to their owner, even
/// under a permissive umask: another local account once copied a 0644 capture out of a 0755
/// directory and read the `Authorization` headers in it.
final class PrivateDataDirectoryTests: XCTestCase {
    private var scratch: URL!
    private var savedUmask: mode_t = 0

    override func setUpWithError() throws {
        scratch = try makeTemporaryDirectory().url
        // The most permissive umask: every mode below is what the code asked for, nothing removed.
        savedUmask = umask(0)
    }

    override func tearDownWithError() throws {
        umask(savedUmask)
    }

    private func mode(_ path: String) -> mode_t {
        var info = stat()
        XCTAssertEqual(lstat(path, &info), 0, "no file at \(path)")
        return info.st_mode & 0o7777
    }

    private func data(_ directory: URL) throws -> DataDirectoryOptions {
        try DataDirectoryOptions.parse(["--data-dir", directory.path])
    }

    /// A new data directory (and its missing parent) is 0700; the capture, its WAL and SHM are
    /// 0600, also when SQLite creates the WAL again after it was removed.
    func testNewDirectoryAndCaptureArePrivate() throws {
        let directory = scratch.appendingPathComponent("parent/data")
        let options = try data(directory)
        XCTAssertNil(try options.preparePrivateDirectory(), "a new directory needs no tightening")
        XCTAssertEqual(mode(directory.path), 0o700)
        XCTAssertEqual(mode(scratch.appendingPathComponent("parent").path), 0o700)

        let path = options.databasePath
        do {
            let repository = TrafficRepository(database: try TrafficDatabase(path: path))
            try repository.insert([Flow(method: "GET", host: "a.test",
                                        requestHeaders: [HeaderField(name: "Authorization", value: "Bearer secret")])])
            for suffix in ["", "-wal", "-shm"] {
                XCTAssertEqual(mode(path + suffix), 0o600, "traffic.sqlite\(suffix)")
            }
            try repository.checkpoint()
        }
        // The last connection closed: SQLite removed the WAL. A new one is 0600 again.
        XCTAssertFalse(FileManager.default.fileExists(atPath: path + "-wal"))
        let repository = TrafficRepository(database: try TrafficDatabase(path: path))
        try repository.insert([Flow(method: "GET", host: "b.test")])
        for suffix in ["", "-wal", "-shm"] {
            XCTAssertEqual(mode(path + suffix), 0o600, "traffic.sqlite\(suffix) after reopening")
        }
    }

    /// An existing 0755 directory with 0644 capture files is tightened once, with one line that
    /// names what changed; files that are not ours (other names, a symlink) are left alone.
    func testExistingLooseDirectoryIsTightened() throws {
        let directory = scratch.appendingPathComponent("data")
        XCTAssertEqual(mkdir(directory.path, 0o755), 0)
        for name in ["traffic.sqlite", "traffic.sqlite-wal", "proxyapp.log", "rules.yml"] {
            XCTAssertTrue(FileManager.default.createFile(atPath: directory.appendingPathComponent(name).path, contents: Data(),
                                                         attributes: [.posixPermissions: 0o644]))
        }
        let outside = scratch.appendingPathComponent("outside.txt")
        XCTAssertTrue(FileManager.default.createFile(atPath: outside.path, contents: Data(), attributes: [.posixPermissions: 0o644]))
        try FileManager.default.createSymbolicLink(at: directory.appendingPathComponent("traffic.sqlite-shm"), withDestinationURL: outside)

        let line = try XCTUnwrap(try data(directory).preparePrivateDirectory())
        XCTAssertEqual(line, "data directory: tightened permissions (other local users could read captured traffic): "
            + "\(directory.path) 755 → 700, \(directory.path)/traffic.sqlite 644 → 600, "
            + "\(directory.path)/traffic.sqlite-wal 644 → 600, \(directory.path)/proxyapp.log 644 → 600")
        XCTAssertEqual(mode(directory.path), 0o700)
        for name in ["traffic.sqlite", "traffic.sqlite-wal", "proxyapp.log"] {
            XCTAssertEqual(mode(directory.appendingPathComponent(name).path), 0o600, name)
        }
        XCTAssertEqual(mode(directory.appendingPathComponent("rules.yml").path), 0o644, "the user's rules file is not captured data")
        XCTAssertEqual(mode(outside.path), 0o644, "a symlink is not followed")
        XCTAssertNil(try data(directory).preparePrivateDirectory(), "the second start has nothing to say")
    }

    /// A directory of another user is not ours to chmod: one only its owner may write to is used
    /// as it is (root with a user's data directory).
    func testPrivateDirectoryOfAnotherUserIsLeftAlone() throws {
        try XCTSkipUnless(geteuid() == 0, "needs root to give a directory to another user")
        let directory = scratch.appendingPathComponent("theirs")
        XCTAssertEqual(mkdir(directory.path, 0o755), 0)
        XCTAssertEqual(chown(directory.path, 65_534, 65_534), 0)
        let capture = directory.appendingPathComponent("traffic.sqlite").path
        XCTAssertTrue(FileManager.default.createFile(atPath: capture, contents: Data(), attributes: [.posixPermissions: 0o600]))
        XCTAssertEqual(chown(capture, 65_534, 65_534), 0, "the directory's owner's own capture is fine")
        XCTAssertNil(try data(directory).preparePrivateDirectory())
        XCTAssertEqual(mode(directory.path), 0o755)
    }

    /// A directory others may create files in and that cannot be made private is refused, and
    /// never chmod'ed: another user's writable one (`--data-dir /tmp` for anyone but root: a
    /// user there planted a 0666 `traffic.sqlite-wal` and read the capture's `Authorization`
    /// headers in it), and a sticky shared one of ours (`/tmp` for root, which chmod 700 broke).
    func testSharedDirectoriesAreRefused() throws {
        let sticky = scratch.appendingPathComponent("sticky")
        XCTAssertEqual(mkdir(sticky.path, 0o1777), 0)
        var owners: [(URL, String)] = [(sticky, "a shared directory")]
        if geteuid() == 0 {
            let theirs = scratch.appendingPathComponent("theirs")
            XCTAssertEqual(mkdir(theirs.path, 0o777), 0)
            XCTAssertEqual(chown(theirs.path, 65_534, 65_534), 0)
            owners.append((theirs, "owned by uid 65534"))
        }
        for (directory, owner) in owners {
            let octal = String(mode(directory.path), radix: 8)
            XCTAssertThrowsError(try data(directory).preparePrivateDirectory()) { error in
                XCTAssertEqual("\(error)", "cannot keep captured traffic in \(directory.path): others may create files in "
                               + "\(directory.path) (mode \(octal), \(owner)), so files they plant there would receive captured "
                               + "traffic. Pass a --data-dir of your own (the default is ~/.proxyapp).")
            }
            XCTAssertEqual(String(mode(directory.path), radix: 8), octal, "left as it was")
        }
    }

    /// In a directory of ours that was loose once, capture files, the log or `ca/` that another
    /// user put there are refused by name: SQLite writes into an existing `-wal` whoever owns
    /// it, and a planted `ca/` would make the proxy sign with a key that user knows.
    func testEntriesOfAnotherUserAreRefused() throws {
        try XCTSkipUnless(geteuid() == 0, "needs root to give files to another user")
        for name in ["traffic.sqlite-wal", "proxyapp.log", "ca"] {
            let directory = scratch.appendingPathComponent("data-\(name)")
            XCTAssertEqual(mkdir(directory.path, 0o777), 0)
            let planted = directory.appendingPathComponent(name)
            if name == "ca" {
                XCTAssertEqual(mkdir(planted.path, 0o755), 0)
            } else {
                XCTAssertTrue(FileManager.default.createFile(atPath: planted.path, contents: Data(), attributes: [.posixPermissions: 0o666]))
            }
            XCTAssertEqual(lchown(planted.path, 65_534, 65_534), 0)
            XCTAssertThrowsError(try data(directory).preparePrivateDirectory(), name) { error in
                XCTAssertEqual("\(error)", "\(planted.path) belongs to another user (uid 65534), who could read the captured "
                               + "traffic written into it. Remove it, or pass another --data-dir.")
            }
        }
        // A symlink is judged by its own owner.
        let directory = scratch.appendingPathComponent("data-link")
        XCTAssertEqual(mkdir(directory.path, 0o700), 0)
        let link = directory.appendingPathComponent("traffic.sqlite-shm")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: "/dev/null")
        XCTAssertEqual(lchown(link.path, 65_534, 65_534), 0)
        XCTAssertThrowsError(try data(directory).preparePrivateDirectory())
    }

    /// `proxyapp import` creates a private data directory and capture.
    func testImportCreatesAPrivateCapture() throws {
        let har = scratch.appendingPathComponent("in.har")
        try Data(#"{"log":{"entries":[{"startedDateTime":"2026-11-22T10:00:00Z","request":{"method":"GET","url":"http://a.test/"}}]}}"#.utf8)
            .write(to: har)
        let directory = scratch.appendingPathComponent("imported")
        try ImportCommand.parse(["--data-dir", directory.path, "--har", har.path]).run()
        XCTAssertEqual(mode(directory.path), 0o700)
        XCTAssertEqual(mode(directory.appendingPathComponent("traffic.sqlite").path), 0o600)

        // Into a shared directory: refused with the directory's own message, not wrapped in a
        // "could not store the flows" one.
        let shared = scratch.appendingPathComponent("shared")
        XCTAssertEqual(mkdir(shared.path, 0o1777), 0)
        XCTAssertThrowsError(try ImportCommand.parse(["--data-dir", shared.path, "--har", har.path]).run()) { error in
            XCTAssertTrue("\(error)".hasPrefix("cannot keep captured traffic in \(shared.path): "), "\(error)")
            XCTAssertTrue("\(error)".hasSuffix("(the default is ~/.proxyapp)."), "\(error)")
        }
    }

    /// A new HAR export is 0600; a file it replaces keeps the mode its owner gave it; a device
    /// written through is never chmod'ed.
    func testExportFilesArePrivateUnlessTheUserChoseAMode() throws {
        let directory = scratch.appendingPathComponent("data")
        _ = try data(directory).preparePrivateDirectory()
        try TrafficRepository(database: try TrafficDatabase(path: try data(directory).databasePath)).insert([Flow(method: "GET", host: "a.test")])
        let fresh = scratch.appendingPathComponent("new.har")
        try ExportCommand.parse(["--data-dir", directory.path, "--har", fresh.path]).run()
        XCTAssertEqual(mode(fresh.path), 0o600)

        let shared = scratch.appendingPathComponent("shared.har")
        XCTAssertTrue(FileManager.default.createFile(atPath: shared.path, contents: Data("old".utf8), attributes: [.posixPermissions: 0o640]))
        try ExportCommand.parse(["--data-dir", directory.path, "--har", shared.path]).run()
        XCTAssertEqual(mode(shared.path), 0o640)
        XCTAssertNotEqual(try Data(contentsOf: shared), Data("old".utf8))

        let devNull = mode("/dev/null")
        try ExportCommand.parse(["--data-dir", directory.path, "--har", "/dev/null"]).run()
        XCTAssertEqual(mode("/dev/null"), devNull)
    }

    /// A capture with one flow, in a private data directory under the scratch directory.
    private func captureDirectory() throws -> URL {
        let directory = scratch.appendingPathComponent("data")
        _ = try data(directory).preparePrivateDirectory()
        try TrafficRepository(database: try TrafficDatabase(path: try data(directory).databasePath))
            .insert([Flow(method: "GET", host: "a.test", requestHeaders: [HeaderField(name: "Authorization", value: "Bearer secret")])])
        return directory
    }

    /// `FILE.partial` is only ever a file the export creates: a symlink planted under that name
    /// (in a shared directory) made the export truncate, fill and chmod the link's target, then
    /// rename the link over FILE.
    func testAPartialNameNeverWritesThroughASymlink() throws {
        let directory = try captureDirectory()
        let precious = scratch.appendingPathComponent("precious.txt")
        XCTAssertTrue(FileManager.default.createFile(atPath: precious.path, contents: Data("keep me".utf8),
                                                     attributes: [.posixPermissions: 0o644]))
        let out = scratch.appendingPathComponent("out.har")
        try FileManager.default.createSymbolicLink(atPath: out.path + ".partial", withDestinationPath: precious.path)
        try ExportCommand.parse(["--data-dir", directory.path, "--har", out.path]).run()
        XCTAssertEqual(try Data(contentsOf: precious), Data("keep me".utf8), "the link's target is untouched")
        XCTAssertEqual(mode(precious.path), 0o644)
        var info = stat()
        XCTAssertEqual(lstat(out.path, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFREG, "the export is a file of its own, not the planted link")
        XCTAssertEqual(mode(out.path), 0o600)
        XCTAssertFalse(FileManager.default.fileExists(atPath: out.path + ".partial"))
    }

    /// A file another user left under the export's name (0666, in a shared directory) is not a
    /// mode the user chose: the export that replaces it is private. Before, it came out 0666 and
    /// that user read the credentials in it.
    func testAnotherUsersFileIsReplacedByAPrivateExport() throws {
        try XCTSkipUnless(geteuid() == 0, "needs root to give a file to another user")
        let directory = try captureDirectory()
        let planted = scratch.appendingPathComponent("planted.har")
        XCTAssertTrue(FileManager.default.createFile(atPath: planted.path, contents: Data(), attributes: [.posixPermissions: 0o666]))
        XCTAssertEqual(chown(planted.path, 65_534, 65_534), 0)
        try ExportCommand.parse(["--data-dir", directory.path, "--har", planted.path]).run()
        XCTAssertEqual(mode(planted.path), 0o600)
        var info = stat()
        XCTAssertEqual(lstat(planted.path, &info), 0)
        XCTAssertEqual(info.st_uid, geteuid())
    }

    /// A symlink another user owns is not written through (as the kernel's protected_symlinks
    /// would refuse in /tmp): the export fails naming why, and the target is untouched.
    func testAnotherUsersSymlinkIsNotWrittenThrough() throws {
        try XCTSkipUnless(geteuid() == 0, "needs root to give a symlink to another user")
        let directory = try captureDirectory()
        let precious = scratch.appendingPathComponent("precious.txt")
        XCTAssertTrue(FileManager.default.createFile(atPath: precious.path, contents: Data("keep me".utf8)))
        let link = scratch.appendingPathComponent("link.har")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: precious.path)
        XCTAssertEqual(lchown(link.path, 65_534, 65_534), 0)
        XCTAssertThrowsError(try ExportCommand.parse(["--data-dir", directory.path, "--har", link.path]).run()) { error in
            XCTAssertEqual("\(error)", "cannot write \(link.path): it is a symbolic link of another user (uid 65534): "
                           + "not writing through it; remove it or choose another name.")
        }
        XCTAssertEqual(try Data(contentsOf: precious), Data("keep me".utf8))
    }

    /// The TUI's log (`proxyapp.log` beside the capture, which `tui --db` may put in a shared
    /// folder) is never written through a symlink, nor into another user's file: the lines go
    /// nowhere instead.
    func testTheTUILogNeverLandsInAPlantedFile() throws {
        let target = scratch.appendingPathComponent("target.txt")
        XCTAssertTrue(FileManager.default.createFile(atPath: target.path, contents: Data()))
        let link = scratch.appendingPathComponent("proxyapp.log")
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: target.path)
        var planted: [String] = [link.path]
        if geteuid() == 0 {
            let theirs = scratch.appendingPathComponent("theirs.log")
            XCTAssertTrue(FileManager.default.createFile(atPath: theirs.path, contents: Data(), attributes: [.posixPermissions: 0o666]))
            XCTAssertEqual(chown(theirs.path, 65_534, 65_534), 0)
            planted.append(theirs.path)
        }
        for path in planted {
            let redirect = OutputRedirect(to: path)
            let line = Array("a log line quoting traffic\n".utf8)
            _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
            redirect.undo()
        }
        XCTAssertEqual(try Data(contentsOf: target).count, 0, "nothing through the symlink")
        if geteuid() == 0 {
            XCTAssertEqual(try Data(contentsOf: scratch.appendingPathComponent("theirs.log")).count, 0, "nothing into their file")
        }
        let own = scratch.appendingPathComponent("own.log")
        let redirect = OutputRedirect(to: own.path)
        _ = Array("kept\n".utf8).withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        redirect.undo()
        XCTAssertEqual(try String(contentsOf: own, encoding: .utf8), "kept\n")
        XCTAssertEqual(mode(own.path), 0o600)
    }
}
