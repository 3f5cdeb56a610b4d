@testable import ProxyCore
import XCTest

/// Every interleaving of an exchange's events, up to a bound, checked against the invariants its
/// driver relies on.
///
/// `Environment` plays driver, client and origin: it offers only events that can really arrive
/// (a connection's events while one is attached, a release after a hold, …). `Monitor` watches
/// the actions and checks, at every transition:
///  1. at most one final head reaches the client, interim ones only before it; a finished
///     exchange whose client was neither closed nor cut got exactly one, and its end;
///  2. a connection is checked in only after its response ended, the request was sent whole on
///     it, and the origin keeps it (not read until close, not 101, no forwarded upgrade);
///  3. the flow is recorded exactly once, when (and only when) the exchange finishes;
///  4. nothing goes to the client after an action that closes it, nothing to a connection that is
///     not attached (and no second connection is asked for while one is);
///  5. a finished exchange leaves no reads paused, and nothing is sent upstream after reads
///     resume within one event's actions (resuming may deliver held body parts at once, as an
///     HTTP/2 stream does: they must follow the head);
///  6. a finished exchange answers late events only with `closeUpstream`/`discardLocalAnswer`;
///  7. an exchange that is not finished can always move: some event that is not a failure or a
///     timeout can still arrive (a lost event or a stale pause would otherwise hang it);
///  8. where an event answers with a list made once (`CommonActions`: connected, upstream end),
///     the general way of building it gives the same actions and the same machine.
/// The search is over the graph of reachable (machine, environment, monitor) states, so each is
/// explored once per remaining depth; a violation fails with the path of events and actions.
final class ExchangeStateMachineInvariantTests: XCTestCase {
    /// Events explored after routing (`INV_DEPTH=10 swift test …` looks deeper, in minutes).
    static let depth = Int(ProcessInfo.processInfo.environment["INV_DEPTH"] ?? "") ?? 8

    func testEveryInterleavingKeepsTheInvariants() {
        let started = Date()
        var states = 0
        var transitions = 0
        var reports: [String: String] = [:]
        for config in StartConfig.all {
            var explorer = Explorer(config: config, depth: Self.depth)
            explorer.run()
            states += explorer.seen.count
            transitions += explorer.transitions
            for (key, report) in explorer.violations where reports[key] == nil { reports[key] = report }
        }
        let seconds = Date().timeIntervalSince(started)
        print("ExchangeStateMachine invariants: \(StartConfig.all.count) start configurations, depth \(Self.depth), "
              + "\(states) states, \(transitions) transitions, \(String(format: "%.1f", seconds)) s")
        for key in reports.keys.sorted() { XCTFail(reports[key]!) }
        // Measured at depth 8: 62,228 states, 347,158 transitions, ~4 s in a debug build (depth 10:
        // ~110,000 states). The floors catch an exploration that silently shrank.
        XCTAssertGreaterThan(states, 50_000, "the exploration shrank")
        XCTAssertGreaterThan(transitions, 280_000, "the exploration shrank")
    }

    // MARK: the monitor catches what it should (hand-built bad actions)

    func testMonitorCatchesASecondFinalHead() {
        var world = World(config: .get(.forward(.plain)))
        world.run([.upstreamConnected(reused: false, bound: false), .clientEnd,
                   .upstreamHead(.init(.contentLength, keepAlive: true, binds: false))])
        XCTAssertContains(world.observe(.upstreamBody, [.writeResponseHead]), "invariant 1")
        var interim = World(config: .get(.forward(.plain)))
        interim.run([.upstreamConnected(reused: false, bound: false), .clientEnd,
                     .upstreamHead(.init(.contentLength, keepAlive: true, binds: false))])
        XCTAssertContains(interim.observe(.upstreamBody, [.writeInterimHead]), "invariant 1")
    }

    func testMonitorCatchesACheckInBeforeTheResponseEnded() {
        var world = World(config: .get(.forward(.plain)))
        world.run([.upstreamConnected(reused: false, bound: false), .clientEnd,
                   .upstreamHead(.init(.contentLength, keepAlive: true, binds: false))])
        XCTAssertContains(world.observe(.upstreamBody, [.checkInUpstream(boundToClient: false)]), "invariant 2")
        var untilClose = World(config: .get(.forward(.plain)))
        untilClose.run([.upstreamConnected(reused: false, bound: false), .clientEnd,
                        .upstreamHead(.init(.untilClose, keepAlive: true, binds: false))])
        XCTAssertContains(untilClose.observe(.upstreamEnd, [.checkInUpstream(boundToClient: false)]), "invariant 2")
    }

    func testMonitorCatchesASecondRecordAndARecordTooEarly() {
        var world = World(config: .get(.forward(.plain)))
        world.run([.upstreamConnected(reused: false, bound: false), .clientEnd])
        XCTAssertContains(world.observe(.clientReadComplete, [.record(error: nil)]), "invariant 3")
        var finished = World(config: .get(.refuse))
        XCTAssertContains(finished.observe(.clientClosed, [.record(error: "again")]), "invariant 3")
    }

    func testMonitorCatchesActionsAfterTheClientOrConnectionWentAway() {
        var world = World(config: .get(.forward(.plain)))
        world.run([.upstreamConnected(reused: false, bound: false)])
        XCTAssertContains(world.observe(.clientReadComplete, [.closeUpstream, .sendRequestEnd]), "invariant 4")
        var client = World(config: .get(.forward(.plain)))
        client.run([.upstreamConnected(reused: false, bound: false), .clientEnd])
        let problems = client.observe(.requestStalled, [.abortClient(reason: "x"), .flushClient])
        XCTAssertContains(problems, "invariant 4")
    }

    func testMonitorCatchesReadsLeftPaused() {
        var world = World(config: .get(.forward(.plain)))
        world.run([.upstreamConnected(reused: false, bound: false), .clientEnd,
                   .upstreamHead(.init(.contentLength, keepAlive: true, binds: false))])
        _ = world.observe(.clientWritable(false), [.pauseUpstreamReads])
        world.machine.phase = .finished
        let ended = world.observe(.upstreamEnd, [.record(error: nil), .completeResponse(close: false, requestEnded: true)],
                                  wasFinished: false)
        XCTAssertContains(ended, "invariant 5")
        var client = World(config: .get(.forward(.plain)))
        client.run([.upstreamConnected(reused: false, bound: false)])
        _ = client.observe(.clientReadComplete, [.pauseClientReads(.upstreamBusy)])
        client.machine.phase = .finished
        XCTAssertContains(client.observe(.requestStalled, [.record(error: "x")], wasFinished: false), "invariant 5")
    }

    func testMonitorCatchesActionsAfterFinishing() {
        var world = World(config: .get(.refuse))
        XCTAssertContains(world.observe(.clientReadComplete, [.flushUpstream]), "invariant 6")
        var late = World(config: .get(.refuse))
        XCTAssertEqual(late.observe(.clientReadComplete, [.discardLocalAnswer]), [])
    }

    func testMonitorCatchesAStuckExchange() {
        var world = World(config: .get(.forward(.plain)))
        world.run([.upstreamConnected(reused: false, bound: false), .clientEnd])
        // The origin's response ended but the machine did nothing with it.
        world.environment.connection = .attached(Origin(finalHead: .init(.contentLength, keepAlive: true, binds: false),
                                                        ended: true))
        XCTAssertContains(world.observe(.upstreamReadComplete, []), "invariant 7")
    }

    // MARK: what the search found

    /// An origin that answers before the request body ended, with the response held (a rewrite):
    /// the connection is closed at the response's end, yet the rest of the body is still kept
    /// for sending (`bufferRequestBody`) until the hold is released, for a connection that will
    /// never come — unbounded memory while a large upload continues.
    func testRequestBodyAfterAHeldEarlyResponseIsNotBufferedForNothing() {
        var world = World(config: StartConfig(name: "POST", request: StartConfig.request("POST"),
                                              fields: [("Content-Length", "10")], bodyParts: 2,
                                              route: .forward(.mayHoldResponse)))
        XCTAssertEqual(world.run([.upstreamConnected(reused: false, bound: false), .clientBody,
                                  .upstreamHead(.init(.contentLength, keepAlive: true, binds: false)),
                                  .responseHoldDecided(true), .upstreamBody]), [])
        XCTAssertEqual(world.deliver(.upstreamEnd).actions, [.closeUpstream, .responseHeld])
        // Captured (`captureRequestBody`) or dropped, but not kept for sending.
        let actions = world.deliver(.clientBody).actions
        XCTAssertFalse(actions.contains(.bufferRequestBody), "\(actions)")
    }

    func testTheSearchFindsAPlantedViolation() {
        var explorer = Explorer(config: .get(.refuse), depth: 1)
        explorer.run()
        XCTAssertTrue(explorer.violations.isEmpty, "\(explorer.violations)")
        var broken = Explorer(config: .get(.forward(.plain)), depth: 6)
        // A monitor that loses the record of every completed response.
        broken.plant = { world in
            if world.lastActions.contains(where: { if case .completeResponse = $0 { return true } else { return false } }) {
                world.monitor.records = 0
            }
        }
        broken.run()
        let report = broken.violations.values.first ?? ""
        XCTAssertTrue(report.contains("invariant 3") && report.contains("config: GET") && report.contains("upstreamEnd"),
                      report)
    }
}

func XCTAssertContains(_ problems: [String], _ text: String, file: StaticString = #filePath,
                               line: UInt = #line) {
    XCTAssertTrue(problems.contains { $0.contains(text) }, "expected \(text) in \(problems)", file: file, line: line)
}

