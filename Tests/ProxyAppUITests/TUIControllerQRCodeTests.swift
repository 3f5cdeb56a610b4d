import CaptureStore
import Foundation
import QRCode
import TerminalUI
import TestSupport
import XCTest

@testable import ProxyAppUI

/// `Q`: the CA page of each network address as a QR code drawn black on white at 80×24, ←/→
/// through the addresses, any other key back to the list; loopback only, or a terminal too
/// small, says what to do instead of drawing a code nobody can scan.
final class TUIControllerQRCodeTests: XCTestCase {
    private func makeController(_ targets: [ProxyInfo.ScanTarget], size: ScreenSize = ScreenSize(width: 80, height: 24)) throws
        -> TUIController {
        let directory = try makeTemporaryDirectory().url
        let repository = TrafficRepository(database: try TrafficDatabase(path: directory.appendingPathComponent("t.sqlite").path))
        let feed = FlowListFeed(repository: repository, timeZone: TimeZone(identifier: "UTC")!, pollInterval: 0.02)
        let context = TUIContext(listenAddress: "0.0.0.0:8080", info: {
            ProxyInfo(proxy: .thisProcess, listenAddress: "0.0.0.0:8080", scanTargets: targets)
        }, proxyRunning: true, outputDirectory: directory.path, version: "test")
        let controller = TUIController(repository: repository, feed: feed, context: context)
        controller.resize(size)
        return controller
    }

    /// The code's cells, as the rows of text they show (the black-on-white ones only).
    private func codeRows(_ grid: ScreenGrid) -> [String] {
        (0..<grid.height).compactMap { row in
            let cells = (0..<grid.width).map { grid[row, $0] }.filter { $0.style.background == .brightWhite }
            return cells.isEmpty ? nil : cells.map(\.text).joined()
        }
    }

    func testCodeOfEachAddressAndBack() throws {
        let targets = [ProxyInfo.ScanTarget(url: "http://192.168.1.5:8080/", label: "wlan0"),
                       ProxyInfo.ScanTarget(url: "http://10.42.0.1:8080/", label: "ap0")]
        let controller = try makeController(targets)
        controller.handle(.character("Q"))
        var grid = controller.render()
        XCTAssertTrue(grid.text.hasPrefix("ProxyApp  scan with a phone"), grid.text)
        XCTAssertTrue(grid.text.contains("http://192.168.1.5:8080/ on wlan0  (1 of 2)"), grid.text)
        XCTAssertEqual(codeRows(grid), try QRCode(encoding: "http://192.168.1.5:8080/").halfBlockLines(quietZone: 2))
        for cell in (0..<grid.width).map({ grid[5, $0] }) where cell.style.background == .brightWhite {
            XCTAssertEqual(cell.style.foreground, .black)
        }

        controller.handle(.right)
        grid = controller.render()
        XCTAssertTrue(grid.text.contains("http://10.42.0.1:8080/ on ap0  (2 of 2)"), grid.text)
        XCTAssertEqual(codeRows(grid), try QRCode(encoding: "http://10.42.0.1:8080/").halfBlockLines(quietZone: 2))
        controller.handle(.right)
        XCTAssertTrue(controller.render().text.contains("(1 of 2)"), "→ goes round")
        controller.handle(.left)
        XCTAssertTrue(controller.render().text.contains("(2 of 2)"), "← goes round")

        controller.handle(.character("x"))
        XCTAssertFalse(controller.render().text.hasPrefix("ProxyApp  scan"), "any other key closes")
    }

    func testLoopbackOnlySaysHowToListenOnTheNetwork() throws {
        let controller = try makeController([])
        controller.handle(.character("Q"))
        let grid = controller.render()
        XCTAssertTrue(grid.text.contains("loopback only") && grid.text.contains("--lan"), grid.text)
        XCTAssertTrue(codeRows(grid).isEmpty)
    }

    func testTooSmallATerminalSaysHowBig() throws {
        let controller = try makeController([ProxyInfo.ScanTarget(url: "http://192.168.1.5:8080/", label: "")],
                                            size: ScreenSize(width: 60, height: 12))
        controller.handle(.character("Q"))
        let grid = controller.render()
        XCTAssertTrue(codeRows(grid).isEmpty)
        XCTAssertTrue(grid.text.contains("Make the terminal at least 29×20 to show the QR code."), grid.text)
    }
}
