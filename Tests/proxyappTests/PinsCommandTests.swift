import ArgumentParser
import CaptureStore
import Foundation
import ProxyModel
import TestSupport
import XCTest

@testable import proxyapp

/// `proxyapp pins list|remove|clear` against a capture in a temporary data directory.
final class PinsCommandTests: XCTestCase {
    private let firstSeen = Date(timeIntervalSince1970: 1_763_760_000)  // 2025-11-21 21:20 UTC

    private func makeCapture(pins: [PinnedDomain]) throws -> (directory: URL, repository: TrafficRepository) {
        let directory = try makeTemporaryDirectory().url
        let repository = TrafficRepository(
            database: try TrafficDatabase(path: directory.appendingPathComponent("traffic.sqlite").path))
        try repository.savePins(pins)
        return (directory, repository)
    }

    private func pin(_ host: String, reason: String = "client rejected the certificate (TLSV1_ALERT_UNKNOWN_CA)",
                     lastSeenAfter seconds: TimeInterval = 3_600, count: Int = 1) -> PinnedDomain {
        PinnedDomain(host: host, reason: reason, evidence: "e", firstSeen: firstSeen,
                     lastSeen: firstSeen.addingTimeInterval(seconds), count: count)
    }

    /// The table lines up its columns, names each pin's client (address and fingerprint, or
    /// "any client" for pins made before pins were per client), shows the expiry `ttl` after the
    /// last failure (or "expired") and puts the reason last.
    func testPinTable() {
        var perClient = pin("api.example.com", count: 12)
        perClient.client = ClientIdentity(address: "127.0.0.1", fingerprint: "t131513h2_aaaaaaaaaaaa_bbbbbbbbbbbb")
        let pins = [
            perClient,
            pin("node.test", reason: "client closed the connection during the TLS handshake 3 times within 60 s",
                lastSeenAfter: 60, count: 3),
        ]
        let now = firstSeen.addingTimeInterval(7_000)
        let text = PinTable.render(pins, ttl: 3_600, now: now, timeZone: TimeZone(identifier: "UTC")!)
        XCTAssertEqual(text, """
            HOST             CLIENT                                         COUNT  FIRST SEEN        LAST SEEN         EXPIRES           REASON
            api.example.com  127.0.0.1 t131513h2_aaaaaaaaaaaa_bbbbbbbbbbbb  12     2025-11-21 21:20  2025-11-21 22:20  2025-11-21 23:20  client rejected the certificate (TLSV1_ALERT_UNKNOWN_CA)
            node.test        any client                                     3      2025-11-21 21:20  2025-11-21 21:21  expired           client closed the connection during the TLS handshake 3 times within 60 s

            """)
        XCTAssertEqual(PinTable.render([], ttl: 3_600, now: now), "No pinned hosts.\n")
    }

    /// `--pin-ttl` takes the duration forms and defaults to run's 7 days; a bad value names the option.
    func testListParsesPinTTL() throws {
        XCTAssertEqual(try PinsCommand.List.parse([]).pinTTL, PinsCommand.defaultPinTTL)
        XCTAssertEqual(try PinsCommand.List.parse(["--pin-ttl", "12h"]).pinTTL.seconds, 43_200)
        XCTAssertThrowsError(try PinsCommand.List.parse(["--pin-ttl", "soon"])) { error in
            let message = PinsCommand.List.message(for: error)
            XCTAssertTrue(message.contains("--pin-ttl"), message)
        }
        let parsed = try ProxyAppCommand.parseAsRoot(["pins", "list", "--pin-ttl", "30m"])
        XCTAssertEqual((parsed as? PinsCommand.List)?.pinTTL.seconds, 1_800)
        XCTAssertTrue(try ProxyAppCommand.parseAsRoot(["pins"]) is PinsCommand.List)
    }

    /// `pins remove` unpins one host whatever its spelling (case, a trailing dot: the host is
    /// normalized as the engine's pins are) and leaves the others.
    func testRemoveUnpinsOneHost() throws {
        let capture = try makeCapture(pins: [pin("a.example"), pin("b.example"), pin("c.example")])
        try PinsCommand.Remove.parse(["--data-dir", capture.directory.path, "A.Example"]).run()
        try PinsCommand.Remove.parse(["--data-dir", capture.directory.path, "c.example."]).run()
        XCTAssertEqual(try capture.repository.pinnedDomains().map(\.host), ["b.example"])
    }

    /// `pins remove HOST` removes the host's pins for every client; `--client ADDRESS` only those
    /// of clients at that address, and says so when there are none.
    func testRemoveIsPerHostAndOptionallyPerClient() throws {
        var app = pin("a.example")
        app.client = ClientIdentity(address: "10.0.0.2", fingerprint: "t130409h1_cccccccccccc_dddddddddddd")
        var curl = pin("a.example")
        curl.client = ClientIdentity(address: "127.0.0.1", fingerprint: "t131513h2_aaaaaaaaaaaa_bbbbbbbbbbbb")
        let capture = try makeCapture(pins: [app, curl, pin("a.example"), pin("b.example")])
        try PinsCommand.Remove.parse(["--data-dir", capture.directory.path, "a.example", "--client", "10.0.0.2"]).run()
        XCTAssertEqual(try capture.repository.pinnedDomains(), [pin("a.example"), curl, pin("b.example")])
        let again = try PinsCommand.Remove.parse(["--data-dir", capture.directory.path, "a.example", "--client", "10.0.0.2"])
        XCTAssertThrowsError(try again.run()) { error in
            XCTAssertTrue("\(error)".contains("a.example is not pinned for clients at 10.0.0.2"), "\(error)")
        }
        XCTAssertThrowsError(try PinsCommand.Remove.parse(["--data-dir", capture.directory.path, "a.example", "--client", " "]))
        try PinsCommand.Remove.parse(["--data-dir", capture.directory.path, "A.EXAMPLE"]).run()
        XCTAssertEqual(try capture.repository.pinnedDomains().map(\.host), ["b.example"])
    }

    /// `pins remove` of a host that is not pinned fails, naming the host and where to look.
    func testRemoveOfAnUnpinnedHostNamesIt() throws {
        let capture = try makeCapture(pins: [pin("a.example")])
        let command = try PinsCommand.Remove.parse(["--data-dir", capture.directory.path, "nope.example"])
        XCTAssertThrowsError(try command.run()) { error in
            let text = "\(error)"
            XCTAssertTrue(text.contains("nope.example is not pinned"), text)
            XCTAssertTrue(text.contains("proxyapp pins list"), text)
        }
        XCTAssertEqual(try capture.repository.pinnedDomains().count, 1)
    }

    /// `pins clear` unpins everything.
    func testClearUnpinsEveryHost() throws {
        let capture = try makeCapture(pins: [pin("a.example"), pin("b.example")])
        try PinsCommand.Clear.parse(["--data-dir", capture.directory.path]).run()
        XCTAssertEqual(try capture.repository.pinnedDomains(), [])
    }

    /// Every pins subcommand on a directory without a capture says where it looked and what to
    /// do, like `flows`, and creates nothing.
    func testWithoutDatabaseNamesTheFix() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("proxyapp-cli-\(UUID())")
        let commands: [any ParsableCommand] = [
            try PinsCommand.List.parse(["--data-dir", directory.path]),
            try PinsCommand.Remove.parse(["--data-dir", directory.path, "a.example"]),
            try PinsCommand.Clear.parse(["--data-dir", directory.path]),
        ]
        for command in commands {
            var mutable = command
            XCTAssertThrowsError(try mutable.run()) { error in
                let text = "\(error)"
                XCTAssertTrue(text.contains("no capture database at \(directory.path)/traffic.sqlite"), text)
                XCTAssertTrue(text.contains("proxyapp run"), text)
            }
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: directory.path))
    }
}
