import Foundation
import XCTest

@testable import proxyapp

/// `TUICommand.info` and `ProxyInfoWatch`: what `proxyapp tui` learns about a proxy on its data
/// directory, looked up again while the UI runs; `LogTime`, the stamp of lines it logs.
final class TUIProxyInfoTests: XCTestCase {
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

    /// A proxy that starts after `proxyapp tui` is found on the next lookup.
    func testWatchLooksAgain() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("proxyapp-watch-\(UUID())")
        defer { try? FileManager.default.removeItem(at: directory) }
        let data = try DataDirectoryOptions.parse(["--data-dir", directory.path])
        let watch = ProxyInfoWatch(interval: .milliseconds(20)) { TUICommand.info(data: data, capturePath: "/c", logPath: "/l") }
        defer { watch.stop() }
        XCTAssertEqual(watch.latest.proxy, .none)
        let marker = try RunningProxies.mark(dataDirectory: directory)
        defer { marker.release() }
        marker.update(listen: "127.0.0.1:9998")
        let deadline = Date().addingTimeInterval(10)
        while watch.latest.listenAddress != "127.0.0.1:9998", Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
        XCTAssertEqual(watch.latest.proxy, .otherProcess(pid: getpid()))
    }

    func testLogTimeLooksLikeSwiftLogs() {
        let stamp = LogTime.now()
        XCTAssertEqual(stamp.count, "2026-11-25T17:05:43+0000".count, stamp)
        XCTAssertEqual(Array(stamp)[10], "T")
    }
}
