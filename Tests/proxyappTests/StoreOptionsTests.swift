import ArgumentParser
import Foundation
import SharedCapture
import XCTest

@testable import proxyapp

/// `--store`, `PROXYAPP_STORE` and `--name`: what is taken, and the messages for what is not.
final class StoreOptionsTests: XCTestCase {
    func testTheStoreComesFromTheFlagElseTheEnvironment() throws {
        let flag = try FlowsCommand.parse(["--store", "postgres://qa@db.test/lab"])
        XCTAssertEqual(try flag.store.address(environment: ["PROXYAPP_STORE": "postgres://other@x/y"])?.host, "db.test")
        let none = try FlowsCommand.parse([])
        XCTAssertNil(try none.store.address(environment: [:]))
        XCTAssertNil(try none.store.address(environment: ["PROXYAPP_STORE": ""]), "set but empty: the local capture")
        XCTAssertEqual(try none.store.address(environment: ["PROXYAPP_STORE": "postgresql://qa@db.test:6000/x"])?.port, 6000)
        XCTAssertThrowsError(try none.store.address(environment: ["PROXYAPP_STORE": "/tmp/capture.sqlite"])) { error in
            XCTAssertTrue("\(error)".hasPrefix("PROXYAPP_STORE takes a postgres:// URL"), "\(error)")
        }
    }

    func testBadStoresAndNamesAreUsageErrorsNamingTheProblem() {
        XCTAssertThrowsError(try FlowsCommand.parse(["--store", "mysql://qa:pw@db/x"])) { error in
            XCTAssertEqual(FlowsCommand.exitCode(for: error), .validationFailure)
            let message = FlowsCommand.message(for: error)
            XCTAssertTrue(message.hasPrefix("--store takes a postgres:// URL"), message)
        }
        XCTAssertThrowsError(try FlowsCommand.parse(["--store", "postgres://qa:hunter2@db/x?sslmode=maybe"])) { error in
            let message = FlowsCommand.message(for: error)
            XCTAssertTrue(message.contains("sslmode 'maybe' is not one of"), message)
            XCTAssertFalse(message.contains("hunter2"), message)
        }
        XCTAssertThrowsError(try RunCommand.parse(["--name", "lab-1"])) { error in
            XCTAssertTrue(RunCommand.message(for: error).contains("add --store postgres://"), RunCommand.message(for: error))
        }
        XCTAssertThrowsError(try RunCommand.parse(["--store", "postgres://qa@db/x", "--name", "lab\u{1b}[31m"])) { error in
            XCTAssertTrue(RunCommand.message(for: error).contains("--name cannot hold control"), RunCommand.message(for: error))
        }
        XCTAssertThrowsError(try RunCommand.parse(["--store", "postgres://qa@db/x", "--name", String(repeating: "n", count: 65)]))
        XCTAssertNoThrow(try RunCommand.parse(["--store", "postgres://qa@db/x", "--name", "QA lab 2 · phones"]))
    }

    func testSinceNarrowsTheListing() throws {
        let command = try FlowsCommand.parse(["--since", "2026-11-22T10:00:00Z", "--count"])
        XCTAssertEqual(command.since?.date, ISO8601DateFormatter().date(from: "2026-11-22T10:00:00Z"))
        XCTAssertThrowsError(try FlowsCommand.parse(["--since", "yesterday"]))
    }

    /// `tui`, `export` and `search` read the shared store too; `tui` takes one capture.
    func testReadingCommandsTakeTheStore() throws {
        XCTAssertEqual(try TUICommand.parse(["--store", "postgres://qa@db.test/lab"]).store.address(environment: [:])?.database,
                       "lab")
        XCTAssertThrowsError(try TUICommand.parse(["--db", "old.sqlite", "--store", "postgres://qa@db.test/lab"])) { error in
            XCTAssertEqual(TUICommand.exitCode(for: error), .validationFailure)
            XCTAssertEqual(TUICommand.message(for: error), "--db and --store name two captures: give one.")
        }
        XCTAssertNotNil(try ExportCommand.parse(["--store", "postgres://qa@db.test/lab", "--har", "-"])
            .store.address(environment: [:]))
        XCTAssertNotNil(try SearchCommand.parse(["--store", "postgres://qa@db.test/lab", "token"])
            .store.address(environment: [:]))
        XCTAssertThrowsError(try SearchCommand.parse(["--store", "mysql://x@y/z", "token"])) { error in
            XCTAssertTrue(SearchCommand.message(for: error).hasPrefix("--store takes a postgres:// URL"))
        }
    }

    /// `replay` and `send` take a shared store, and `--name` for their flows there (only with one).
    func testReplayTakesTheStoreAndAName() throws {
        let replay = try ReplayCommand.parse(["--store", "postgres://qa@db.test/lab", "--name", "desk-3", "7"])
        XCTAssertEqual(replay.engine.name, "desk-3")
        XCTAssertEqual(try replay.engine.store.address(environment: [:])?.host, "db.test")
        XCTAssertThrowsError(try ReplayCommand.parse(["--name", "desk-3", "7"])) { error in
            XCTAssertEqual(ReplayCommand.message(for: error), "--name names this machine's flows in a shared store: add --store URL.")
        }
        XCTAssertThrowsError(try SendCommand.parse(["--store", "postgres://qa@db.test/lab", "--name", "", "-"])) { error in
            XCTAssertTrue(SendCommand.message(for: error).contains("--name takes 1 to 64 characters"))
        }
    }
}
