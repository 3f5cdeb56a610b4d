import Logging
import NIOConcurrencyHelpers
import NIOCore
import XCTest
@testable import ProxyEngine

/// Refused clients are logged one line each, at most a burst per window; the lines held back
/// are counted in the next line written.
final class RefusalLogTests: XCTestCase {
    private final class Lines: @unchecked Sendable {
        let box = NIOLockedValueBox<[String]>([])
    }

    private struct CollectingHandler: LogHandler {
        let lines: Lines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(level: Logger.Level, message: Logger.Message, metadata: Logger.Metadata?, source: String,
                 file: String, function: String, line: UInt) {
            lines.box.withLockedValue { $0.append(message.description) }
        }
    }

    func testBurstThenCountedSilenceThenMore() {
        let lines = Lines()
        let log = RefusalLog(logger: Logger(label: "t", factory: { _ in CollectingHandler(lines: lines) }),
                             burst: 3, window: .seconds(60))
        let start = NIODeadline.uptimeNanoseconds(1_000_000_000_000)
        for index in 0..<10 {
            log.note("refused \(index)", now: start + .seconds(Int64(index)))
        }
        XCTAssertEqual(lines.box.withLockedValue { $0 }, ["refused 0", "refused 1", "refused 2"])
        XCTAssertTrue(log.note("refused late", now: start + .seconds(61)))
        XCTAssertEqual(lines.box.withLockedValue { $0 }.last, "refused late (and 7 refusals before it not logged)")
        XCTAssertTrue(log.note("next", now: start + .seconds(62)))
        XCTAssertEqual(lines.box.withLockedValue { $0 }.last, "next", "the count is said once")
    }
}
