import Foundation
import Rules
import XCTest

@testable import proxyapp

/// `RulesStateText`: the one line about the rules that the banners and the TUI's `i` screen
/// share, and `TUICommand.info`, what `proxyapp tui` learns about a proxy on its data directory.
final class RulesStateTextTests: XCTestCase {
    func testLines() {
        XCTAssertEqual(RulesStateText.line(enabled: 0, source: nil, lastError: nil, path: "/d/rules.yml"),
                       "Rules: none (create /d/rules.yml to add some; it is picked up while the proxy runs)")
        XCTAssertEqual(RulesStateText.line(enabled: 4, source: "/d/rules.yml", lastError: nil, path: "/d/rules.yml"),
                       "Rules: 4 active from /d/rules.yml (edits are reloaded while the proxy runs)")
        XCTAssertEqual(RulesStateText.line(enabled: 4, source: "/d/rules.yml", lastError: "/d/rules.yml:3:1: bad\nmore", path: "/d/rules.yml"),
                       "Rules: 4 active; the last reload of /d/rules.yml failed, the previous rules stay in force: /d/rules.yml:3:1: bad")
        let live = LiveRules()
        live.reloadFailed("line 1: nope")
        XCTAssertEqual(RulesStateText.line(live.status, path: "/d/rules.yml"),
                       "Rules: 0 active; the last reload of /d/rules.yml failed, the previous rules stay in force: line 1: nope")
    }

    /// A proxy holding its marker on the data directory is found, with its address and the CA.
    func testTUIInfoFindsTheRunningProxy() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("proxyapp-info-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = try DataDirectoryOptions.parse(["--data-dir", directory.path])
        var info = TUICommand.info(data: data, capturePath: "/c.sqlite", logPath: "/l.log")
        XCTAssertEqual(info.proxy, .none)
        XCTAssertEqual(info.listenAddress, "")
        XCTAssertEqual(info.caCertificatePath, "", "no CA file yet")

        let marker = try RunningProxies.mark(dataDirectory: directory)
        defer { marker.release() }
        marker.update(listen: "127.0.0.1:9999")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("ca"), withIntermediateDirectories: true)
        FileManager.default.createFile(atPath: data.certificateAuthorityStore.certificatePEMPath, contents: Data("pem".utf8))
        info = TUICommand.info(data: data, capturePath: "/c.sqlite", logPath: "/l.log")
        XCTAssertEqual(info.proxy, .otherProcess(pid: getpid()))
        XCTAssertEqual(info.listenAddress, "127.0.0.1:9999")
        XCTAssertEqual(info.dataDirectory, directory.path)
        XCTAssertEqual(info.caCertificatePath, data.certificateAuthorityStore.certificatePEMPath)
        XCTAssertEqual(TUICommand.info(data: nil, capturePath: "/c.sqlite", logPath: "/l.log").proxy, .none, "--db: no data directory")
    }

    func testLogTimeLooksLikeSwiftLogs() {
        let stamp = LogTime.now()
        XCTAssertEqual(stamp.count, "2026-11-25T17:05:43+0000".count, stamp)
        XCTAssertEqual(Array(stamp)[10], "T")
    }
}
