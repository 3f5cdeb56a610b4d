import CaptureStore
import Foundation
import ProxyModel
import TerminalUI
import TestSupport
import XCTest

@testable import ProxyAppUI

/// What every `TUIController` test needs: a capture in a scratch directory, a controller with a
/// fast-polling feed on it, and `settle`, which drives it as the terminal loop does (tick,
/// render) until the screen shows what the test waits for.
class TUIControllerTestCase: XCTestCase {
    var directory: URL!

    override func setUpWithError() throws {
        directory = try makeTemporaryDirectory().url
    }

    /// `name`: the capture file in `directory` (a test that opens several captures names each).
    func makeRepository(_ flows: [Flow], name: String = "traffic.sqlite") throws -> TrafficRepository {
        let repository = TrafficRepository(database: try TrafficDatabase(path: directory.appendingPathComponent(name).path))
        try repository.insert(flows)
        return repository
    }

    /// Ten flows: GETs to a.test, every third a POST to b.test.
    static var tenFlows: [Flow] {
        (0..<10).map { index in
            index % 3 == 0
                ? Flow(method: "POST", host: "b.test", path: "/post/\(index)", status: 201)
                : Flow(host: "a.test", path: "/get/\(index)", status: 200)
        }
    }

    func makeController(_ flows: [Flow] = tenFlows, context: TUIContext? = nil,
                        size: ScreenSize = ScreenSize(width: 100, height: 20),
                        name: String = "traffic.sqlite", pollInterval: TimeInterval = 0.02) throws -> (TUIController, TrafficRepository) {
        let repository = try makeRepository(flows, name: name)
        let feed = FlowListFeed(repository: repository, timeZone: TimeZone(identifier: "UTC")!, pollInterval: pollInterval,
                                firstSliceSize: 500)
        feed.start()
        addTeardownBlock { feed.stop() }
        let controller = TUIController(repository: repository, feed: feed,
                                       context: context ?? TUIContext(outputDirectory: directory.path, version: "test"))
        controller.resize(size)
        return (controller, repository)
    }

    /// Ticks until `condition` holds (at most 10 s); fails with the screen otherwise.
    @discardableResult
    func settle(_ controller: TUIController, file: StaticString = #filePath, line: UInt = #line,
                until condition: (TUIController, String) -> Bool) -> String {
        let deadline = Date().addingTimeInterval(10)
        var screen = ""
        repeat {
            controller.worker.waitUntilIdle()
            controller.tick()
            screen = controller.render().text
            if condition(controller, screen) { return screen }
            Thread.sleep(forTimeInterval: 0.005)
        } while Date() < deadline
        XCTFail("not reached within 10 s; screen:\n\(screen)", file: file, line: line)
        return screen
    }

    func type(_ text: String, into controller: TUIController) {
        for character in text { controller.handle(.character(character)) }
    }
}
