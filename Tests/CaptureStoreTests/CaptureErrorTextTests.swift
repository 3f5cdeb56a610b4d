import GRDB
import XCTest

@testable import CaptureStore

/// Capture failures reach users in words: never SQLite's own text or the SQL that was running.
final class CaptureErrorTextTests: XCTestCase {
    /// What `proxyapp run` printed for a capture file it could not write (an immutable file).
    func testAReadOnlyDatabaseIsNamedWithoutSQLitesText() {
        let error = DatabaseError(resultCode: .SQLITE_READONLY, message: "attempt to write a readonly database",
                                  sql: "CREATE TABLE grdb_issue_102 (id INTEGER PRIMARY KEY)")
        let text = CaptureErrorText.describe(error)
        XCTAssertTrue(text.contains("cannot be written"), text)
        XCTAssertFalse(text.contains("SQLite error"), text)
        XCTAssertFalse(text.contains("CREATE TABLE"), text)
        XCTAssertFalse(text.contains("readonly database"), text)
    }

    /// Extended result codes (SQLITE_IOERR_WRITE, SQLITE_BUSY_SNAPSHOT) read as their primary one.
    func testExtendedCodesReadAsTheirPrimaryCode() {
        XCTAssertEqual(CaptureErrorText.describe(DatabaseError(resultCode: .SQLITE_IOERR_WRITE)),
                       CaptureErrorText.describe(DatabaseError(resultCode: .SQLITE_IOERR)))
        XCTAssertTrue(CaptureErrorText.describe(DatabaseError(resultCode: .SQLITE_BUSY_SNAPSHOT)).contains("locked"))
        XCTAssertTrue(CaptureErrorText.describe(DatabaseError(resultCode: .SQLITE_FULL)).contains("disk is full"))
    }

    /// A real failure from the store: a capture in a folder that does not exist.
    func testOpeningInAMissingFolderSaysWhatToCheck() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("missing-\(UUID().uuidString)")
        do {
            _ = try TrafficDatabase(path: folder.appendingPathComponent("traffic.sqlite").path)
            XCTFail("a capture opened in a folder that does not exist")
        } catch {
            let text = CaptureErrorText.describe(error)
            XCTAssertTrue(text.contains("folder exists"), text)
            XCTAssertFalse(text.contains("SQLite error"), text)
        }
    }

    /// The store's own errors already speak in words, and unknown errors keep their description.
    func testOtherErrorsKeepTheirWords() {
        let own = CaptureStoreError.notACaptureDatabase(path: "/tmp/x.sqlite")
        XCTAssertEqual(CaptureErrorText.describe(own), own.description)
        struct Other: Error, CustomStringConvertible { var description: String { "something else" } }
        XCTAssertEqual(CaptureErrorText.describe(Other()), "something else")
    }
}
