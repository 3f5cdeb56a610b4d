import Dispatch
import NIOConcurrencyHelpers
import XCTest

@testable import proxyapp

/// When the code pages are released: once at start, then after an idle report only if nothing
/// happened during the delay, once per report, never after stop.
final class IdlePageReleaseTests: XCTestCase {
    private final class Probe: Sendable {
        let releases = NIOLockedValueBox(0)
        let activity = NIOLockedValueBox(0)
        let released: XCTestExpectation?

        init(expecting released: XCTestExpectation? = nil) {
            self.released = released
        }

        func makeRelease(delay: DispatchTimeInterval = .milliseconds(50),
                         startDelay: DispatchTimeInterval = .milliseconds(1)) -> IdlePageRelease {
            IdlePageRelease(delay: delay, startDelay: startDelay) { [self] in
                releases.withLockedValue { $0 += 1 }
                released?.fulfill()
            }
        }
    }

    func testStartReleasesOnce() {
        let released = expectation(description: "released at start")
        let probe = Probe(expecting: released)
        let release = probe.makeRelease()
        release.start { probe.activity.withLockedValue { $0 } }
        wait(for: [released], timeout: 10)
        XCTAssertEqual(probe.releases.withLockedValue { $0 }, 1)
    }

    func testAnIdleSpellWithoutActivityReleasesAfterTheDelay() {
        let released = expectation(description: "released")
        released.expectedFulfillmentCount = 2  // start, then the idle spell
        let probe = Probe(expecting: released)
        let release = probe.makeRelease()
        release.start { probe.activity.withLockedValue { $0 } }
        release.captureWentIdle()
        wait(for: [released], timeout: 10)
    }

    func testActivityDuringTheDelayCancelsTheRelease() {
        let (probe, release) = startedAfterItsFirstRelease()
        release.captureWentIdle()
        probe.activity.withLockedValue { $0 += 1 }  // a flow written meanwhile
        settle(seconds: 1)
        XCTAssertEqual(probe.releases.withLockedValue { $0 }, 1, "only the start's release")
    }

    func testALaterIdleReportSupersedesAnEarlierOne() {
        let (probe, release) = startedAfterItsFirstRelease()
        release.captureWentIdle()
        release.captureWentIdle()
        release.captureWentIdle()
        settle(seconds: 1.2)
        XCTAssertEqual(probe.releases.withLockedValue { $0 }, 2, "one release for the last report")
    }

    func testNothingAfterStopNorBeforeStart() {
        let probe = Probe()
        let release = probe.makeRelease()
        release.captureWentIdle()  // not started: no activity to compare, nothing scheduled
        settle(seconds: 0.5)
        XCTAssertEqual(probe.releases.withLockedValue { $0 }, 0)
        release.start { probe.activity.withLockedValue { $0 } }
        waitUntilReleases(probe, reach: 1)
        release.captureWentIdle()
        release.stop()
        settle(seconds: 0.5)
        XCTAssertEqual(probe.releases.withLockedValue { $0 }, 1)
    }

    func testAProxyStoppedBeforeTheStartReleaseGetsNone() {
        let probe = Probe()
        let release = probe.makeRelease(startDelay: .milliseconds(200))
        release.start { probe.activity.withLockedValue { $0 } }
        release.stop()
        settle(seconds: 0.6)
        XCTAssertEqual(probe.releases.withLockedValue { $0 }, 0)
    }

    /// A release with a 300 ms delay, started, once its start's release ran.
    private func startedAfterItsFirstRelease() -> (Probe, IdlePageRelease) {
        let probe = Probe()
        let release = probe.makeRelease(delay: .milliseconds(300))
        release.start { probe.activity.withLockedValue { $0 } }
        waitUntilReleases(probe, reach: 1)
        return (probe, release)
    }

    private func waitUntilReleases(_ probe: Probe, reach count: Int) {
        let deadline = Date().addingTimeInterval(10)
        while probe.releases.withLockedValue({ $0 }) < count, Date() < deadline { usleep(5_000) }
        XCTAssertEqual(probe.releases.withLockedValue { $0 }, count)
    }

    /// Lets scheduled work run: the delays above are far shorter than this.
    private func settle(seconds: Double) {
        usleep(useconds_t(seconds * 1_000_000))
    }
}
