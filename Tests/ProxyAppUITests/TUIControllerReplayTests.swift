import CaptureStore
import FlowFilter
import Foundation
import NIOConcurrencyHelpers
import ProxyModel
import TerminalUI
import XCTest

@testable import ProxyAppUI

/// `r`: the selected flow, or the marked flows of the view in order, handed to the proxy's
/// replay (`TUIContext.replay`); its answer on the status line; the replays, stored by the proxy
/// as new flows, shown with `↻` and found by `~replay`; no proxy to send through said in words.
final class TUIControllerReplayTests: TUIControllerTestCase {
    /// A replay that records what it was asked and stores a linked flow for each id, as the proxy would.
    private func recordingReplay(into repository: @escaping @Sendable () -> TrafficRepository?,
                                 asked: NIOLockedValueBox<[[Int64]]>) -> @Sendable ([Int64]) -> TUIActionResult {
        { ids in
            asked.withLockedValue { $0.append(ids) }
            let replays = ids.map { Flow(host: "a.test", path: "/replayed/\($0)", status: 200, replayOf: $0) }
            _ = try? repository()?.insert(replays)
            return TUIActionResult(ok: true, message: "replayed \(ids.count) requests: \(ids.count) answered")
        }
    }

    func testReplaySendsTheSelectedOrTheMarkedFlows() throws {
        let asked = NIOLockedValueBox<[[Int64]]>([])
        let store = NIOLockedValueBox<TrafficRepository?>(nil)
        let context = TUIContext(outputDirectory: directory.path, version: "test",
                                 replay: recordingReplay(into: { store.withLockedValue { $0 } }, asked: asked))
        let (controller, repository) = try makeController(context: context)
        store.withLockedValue { $0 = repository }
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }

        controller.handle(.character("r"))  // the last flow (following)
        var screen = settle(controller) { _, screen in screen.contains("replayed 1 requests") }
        XCTAssertEqual(asked.withLockedValue { $0 }, [[10]])
        screen = settle(controller) { controller, _ in controller.listProgress.rows == 11 && controller.isListSettled }
        XCTAssertTrue(screen.contains("↻"), screen)

        controller.handle(.home)
        controller.handle(.character("m"))
        controller.handle(.character("j"))
        controller.handle(.character("j"))
        controller.handle(.character("m"))
        settle(controller) { controller, _ in controller.list.row(at: 2)?.marked == true }
        controller.handle(.character("r"))
        settle(controller) { _, screen in screen.contains("replayed 2 requests") }
        XCTAssertEqual(asked.withLockedValue { $0 }.last, [1, 3], "marked flows, in order")

        controller.handle(.character("/"))
        type("~replay", into: controller)
        controller.handle(.enter)
        screen = settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 3 }
        XCTAssertEqual(try repository.count(matching: FlowQuery(filter: FlowFilter(parsing: "~replay"))), 3)

        // In the detail view, `r` sends the open flow only, and the title names its original.
        controller.handle(.home)
        controller.handle(.enter)
        screen = settle(controller) { _, screen in screen.contains("↻ #10") }
        controller.handle(.character("r"))
        settle(controller) { _, screen in screen.contains("replayed 1 requests") }
        XCTAssertEqual(asked.withLockedValue { $0 }.last, [11])
    }

    func testWithoutAProxyReplayIsRefusedInWords() throws {
        let (controller, repository) = try makeController()
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        controller.handle(.character("r"))
        let screen = controller.render().text
        XCTAssertTrue(screen.contains("no proxy to send through"), screen)
        controller.worker.waitUntilIdle()
        XCTAssertEqual(try repository.count(), 10)
    }

    func testAFailedReplaySaysWhy() throws {
        let context = TUIContext(outputDirectory: directory.path, version: "test", replay: { _ in
            TUIActionResult(ok: false, message: "flow #10 is a tunnel of opaque bytes: there is no HTTP request to replay")
        })
        let (controller, _) = try makeController(context: context)
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        controller.handle(.character("r"))
        settle(controller) { _, screen in screen.contains("flow #10 is a tunnel of opaque bytes") }
    }
}
