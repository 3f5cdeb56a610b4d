import XCTest
@testable import ProxyCore

/// Transcripts of the machine's hold state (what a rewrite rule uses today and a breakpoint
/// will) and of local answers (block, map-local), with no channel.
final class ExchangeStateMachineHoldTests: XCTestCase {
    typealias Machine = ExchangeStateMachine


    func routed(_ request: Machine.Request, _ route: Machine.Route, fields: [(name: String, value: String)] = ExchangeFixtures.noFields)
        -> (Machine, [ExchangeAction]) {
        var machine = Machine(request: request)
        XCTAssertEqual(machine.start(fields: fields), [.route])
        let actions = machine.routeDecided(route)
        return (machine, actions)
    }

    static let holdingRequest = Machine.Route.forward(.init(host: "origin.test", port: 80, holdsRequest: true))
    static let mayHoldResponse = Machine.Route.forward(.init(host: "origin.test", port: 80, mayHoldResponse: true))

    // MARK: request holds

    func testHeldRequestWaitsWholeThenGoesOutAfterRelease() {
        var (machine, actions) = routed(ExchangeFixtures.post, Self.holdingRequest, fields: ExchangeFixtures.lengthFields)
        XCTAssertEqual(actions, [], "no connection while the request is held")
        XCTAssertTrue(machine.holdsRequest)
        XCTAssertEqual(machine.clientBody(), [.holdRequestBody])
        XCTAssertEqual(machine.clientEnd(), [.requestHeld])
        XCTAssertFalse(machine.awaitsClientBody)
        XCTAssertEqual(machine.requestStalled(seconds: 30), [], "a held request is not the client's stall")
        XCTAssertEqual(machine.requestReleased(), [.bufferReleasedRequestBody, .openUpstream(allowReuse: true)])
        XCTAssertEqual(machine.requestReleased(), [], "released once")
        XCTAssertEqual(machine.upstreamConnected(reused: true),
                       [.sendRequestHead, .sendBufferedRequestBody, .sendRequestEnd, .flushUpstream])
    }

    func testHeldRequestAnswersContinueItself() {
        let request = ExchangeFixtures.request("POST", minorVersion: 1, keepAlive: true, expectsContinue: true, asksUpgrade: false)
        var (machine, actions) = routed(request, Self.holdingRequest, fields: ExchangeFixtures.lengthFields)
        XCTAssertEqual(actions, [.writeContinue])
        _ = machine.clientEnd()
        _ = machine.requestReleased()
        _ = machine.upstreamConnected(reused: false)
        XCTAssertEqual(machine.upstreamHead(status: 100, fields: ExchangeFixtures.noFields, keepAlive: true, bindsConnection: false), [],
                       "the origin's 100 is not sent twice")
    }

    func testOversizedHeldRequestIsReleasedUnchangedAndStreams() {
        var (machine, _) = routed(ExchangeFixtures.post, Self.holdingRequest, fields: ExchangeFixtures.lengthFields)
        _ = machine.clientBody()
        XCTAssertEqual(machine.requestHoldOverflowed(), [.bufferReleasedRequestBody, .openUpstream(allowReuse: true)])
        XCTAssertFalse(machine.holdsRequest)
        XCTAssertEqual(machine.upstreamConnecting(), [.pauseClientReads(.connecting)])
        XCTAssertEqual(machine.clientBody(), [.bufferRequestBody])
        XCTAssertEqual(machine.upstreamConnected(reused: false),
                       [.sendRequestHead, .sendBufferedRequestBody, .flushUpstream, .resumeClientReads(.connecting)])
        XCTAssertEqual(machine.clientEnd(), [.sendRequestEnd, .flushUpstream])
    }

    func testUpgradeIsNeverHeld() {
        let (machine, actions) = routed(ExchangeFixtures.get, .forward(.init(host: "o", port: 80, forwardsUpgrade: true, holdsRequest: true)))
        XCTAssertEqual(actions, [.openUpstream(allowReuse: true)])
        XCTAssertFalse(machine.holdsRequest)
    }

    func testAbortedHeldRequestIs502AndNothingIsSent() {
        var (machine, _) = routed(ExchangeFixtures.post, Self.holdingRequest, fields: ExchangeFixtures.lengthFields)
        _ = machine.clientEnd()
        let failure = ProxyFailure.heldExchangeAborted(side: "request")
        XCTAssertEqual(machine.holdAborted(),
                       [.cancelWork, .record(error: failure.message), .answer(failure, keepAlive: true, requestEnded: true)])
        XCTAssertEqual(failure.statusCode, 502)
        XCTAssertEqual(machine.requestReleased(), [], "a release after the abort sends nothing")
    }

    func testHeldRequestTimesOutWith504() {
        var (machine, _) = routed(ExchangeFixtures.post, Self.holdingRequest, fields: ExchangeFixtures.lengthFields)
        XCTAssertEqual(machine.holdTimedOut(seconds: 60), [], "nothing is held before the request ended")
        _ = machine.clientEnd()
        let actions = machine.holdTimedOut(seconds: 60)
        guard case .answer(let failure, _, _) = actions.last else { return XCTFail("\(actions)") }
        XCTAssertEqual(failure, .heldExchangeTimedOut(side: "request", seconds: 60))
        XCTAssertEqual(failure.statusCode, 504)
    }

    func testClientLeavingAHeldRequestCancelsTheWork() {
        var (machine, _) = routed(ExchangeFixtures.post, Self.holdingRequest, fields: ExchangeFixtures.lengthFields)
        _ = machine.clientEnd()
        XCTAssertEqual(machine.clientClosed(reason: "gone"), [.cancelWork, .record(error: "gone")])
        XCTAssertEqual(machine.requestReleased(), [])
    }

    // MARK: response holds

    func responseHeld() -> Machine {
        var (machine, _) = routed(ExchangeFixtures.get, Self.mayHoldResponse)
        _ = machine.upstreamConnected(reused: true)
        _ = machine.clientEnd()
        let actions = machine.upstreamHead(status: 200, fields: ExchangeFixtures.lengthFields, keepAlive: true, bindsConnection: false)
        XCTAssertEqual(actions.last, .decideResponseHold)
        XCTAssertEqual(machine.responseHoldDecided(hold: true), [])
        return machine
    }

    func testHeldResponseIsWrittenWholeAfterRelease() {
        var machine = responseHeld()
        XCTAssertEqual(machine.upstreamBody(), [.holdResponseBody])
        XCTAssertEqual(machine.upstreamEnd(), [.checkInUpstream(boundToClient: false), .responseHeld],
                       "the origin is done with: its connection goes back at once")
        XCTAssertEqual(machine.upstreamFailed(.upstreamClosed(host: "o", port: 80), mayRetry: true), [])
        XCTAssertEqual(machine.responseReleased(),
                       [.writeReleasedResponse, .record(error: nil), .completeResponse(close: false, requestEnded: true)])
    }

    func testResponseNotHeldIsWrittenAtOnce() {
        var (machine, _) = routed(ExchangeFixtures.get, Self.mayHoldResponse)
        _ = machine.upstreamConnected(reused: true)
        _ = machine.clientEnd()
        _ = machine.upstreamHead(status: 200, fields: ExchangeFixtures.lengthFields, keepAlive: true, bindsConnection: false)
        XCTAssertEqual(machine.upstreamBody(), [], "nothing is written before the hold is decided")
        XCTAssertEqual(machine.responseHoldDecided(hold: false), [.writeResponseHead])
        XCTAssertEqual(machine.upstreamBody(), [.writeResponseBody])
    }

    func testOversizedHeldResponseIsWrittenAsItCame() {
        var machine = responseHeld()
        _ = machine.upstreamBody()
        XCTAssertEqual(machine.responseHoldOverflowed(), [.writeResponseHead, .writeHeldResponseBody])
        XCTAssertEqual(machine.upstreamBody(), [.writeResponseBody])
        XCTAssertEqual(machine.upstreamEnd().suffix(2), [.record(error: nil), .completeResponse(close: false, requestEnded: true)])
    }

    func testAbortedHeldResponseIs502() {
        var machine = responseHeld()
        _ = machine.upstreamEnd()
        let actions = machine.holdAborted()
        XCTAssertEqual(actions.last, .answer(.heldExchangeAborted(side: "response"), keepAlive: true, requestEnded: true))
        XCTAssertFalse(actions.contains(.closeUpstream), "the connection was already checked in")
        XCTAssertEqual(machine.responseReleased(), [])
    }

    /// A breakpoint's kill: a held request is answered 502 (the proxy's answer, naming why); a
    /// held response is never written and the client's connection is reset.
    func testKilledHeldRequestIs502AndKilledHeldResponseResetsTheClient() {
        var (request, _) = routed(ExchangeFixtures.post, Self.holdingRequest, fields: ExchangeFixtures.lengthFields)
        XCTAssertEqual(request.holdKilled(), [], "nothing is held before the request ended")
        _ = request.clientEnd()
        let failure = ProxyFailure.heldExchangeAborted(side: "request")
        XCTAssertEqual(request.holdKilled(),
                       [.cancelWork, .record(error: failure.message), .answer(failure, keepAlive: true, requestEnded: true)])
        XCTAssertEqual(request.requestReleased(), [])

        var response = responseHeld()
        _ = response.upstreamEnd()
        let killed = ProxyFailure.heldExchangeAborted(side: "response")
        let actions = response.holdKilled()
        XCTAssertEqual(actions.suffix(2), [.record(error: killed.message), .abortClient(reason: killed.message)])
        XCTAssertFalse(actions.contains { if case .answer = $0 { return true } else { return false } }, "no answer from the proxy")
        XCTAssertFalse(actions.contains(.writeReleasedResponse))
        XCTAssertEqual(response.responseReleased(), [])
        XCTAssertEqual(response.holdKilled(), [], "once is all")
    }

    func testClientLeavingAHeldResponse() {
        var machine = responseHeld()
        _ = machine.upstreamEnd()
        XCTAssertEqual(machine.clientClosed(reason: "gone"), [.cancelWork, .record(error: "gone")])
        XCTAssertEqual(machine.responseReleased(), [])
    }

    func testUpgradeResponseIsNeverHeld() {
        var (machine, _) = routed(ExchangeFixtures.get, .forward(.init(host: "o", port: 80, forwardsUpgrade: true, mayHoldResponse: true)))
        _ = machine.upstreamConnected(reused: false)
        _ = machine.clientEnd()
        XCTAssertEqual(machine.upstreamHead(status: 101, fields: ExchangeFixtures.noFields, keepAlive: true, bindsConnection: false).last,
                       .writeResponseHead)
    }

    // MARK: local answers

    func testBlockAnswersOnceTheRequestEnded() {
        var (machine, actions) = routed(ExchangeFixtures.post, .answerLocally(needsPreparation: false), fields: ExchangeFixtures.lengthFields)
        XCTAssertEqual(actions, [])
        XCTAssertEqual(machine.clientBody(), [.captureRequestBody])
        XCTAssertEqual(machine.upstreamBody(), [], "no origin")
        XCTAssertEqual(machine.clientEnd(), [.startLocalAnswer(close: false)])
        XCTAssertTrue(machine.isWritingLocalAnswer)
        XCTAssertEqual(machine.localAnswerFinished(),
                       [.record(error: nil), .completeResponse(close: false, requestEnded: true)])
        XCTAssertEqual(machine.localAnswerFinished(), [])
    }

    func testMapLocalWaitsForItsFileAndTheRequest() {
        let request = ExchangeFixtures.request("POST", minorVersion: 1, keepAlive: true, expectsContinue: true, asksUpgrade: false)
        var (machine, actions) = routed(request, .answerLocally(needsPreparation: true), fields: ExchangeFixtures.lengthFields)
        XCTAssertEqual(actions, [.writeContinue, .prepareLocalAnswer])
        XCTAssertEqual(machine.clientEnd(), [], "the file is not open yet")
        XCTAssertEqual(machine.localAnswerPrepared(), [.startLocalAnswer(close: false)])
    }

    func testLocalAnswerToAnUpgradeRequestCloses() {
        let request = ExchangeFixtures.request("GET", minorVersion: 1, keepAlive: true, expectsContinue: false, asksUpgrade: true)
        var (machine, _) = routed(request, .answerLocally(needsPreparation: false))
        XCTAssertEqual(machine.clientEnd(), [.startLocalAnswer(close: true)])
        XCTAssertEqual(machine.localAnswerFinished().last, .completeResponse(close: true, requestEnded: true))
    }

    func testLocalFileFailingMidwayCutsTheConnection() {
        var (machine, _) = routed(ExchangeFixtures.get, .answerLocally(needsPreparation: true))
        _ = machine.localAnswerPrepared()
        _ = machine.clientEnd()
        XCTAssertEqual(machine.localAnswerFailed(reason: "map_local: I/O error"),
                       [.cancelWork, .discardLocalAnswer, .record(error: "map_local: I/O error (response incomplete)"),
                        .abortClient(reason: "map_local: I/O error")])
    }

    func testClientNotReadingALocalFileIsCut() {
        var (machine, _) = routed(ExchangeFixtures.get, .answerLocally(needsPreparation: false))
        XCTAssertEqual(machine.writeStalled(seconds: 30), [], "nothing is being written yet")
        _ = machine.clientEnd()
        let actions = machine.writeStalled(seconds: 30)
        XCTAssertEqual(actions.last, .abortClient(reason: "the client stopped reading the map_local file for 30s"))
    }

    func testClientLeavingBeforeTheFileOpenedDiscardsIt() {
        var (machine, _) = routed(ExchangeFixtures.get, .answerLocally(needsPreparation: true))
        XCTAssertEqual(machine.clientClosed(reason: "gone"), [.cancelWork, .record(error: "gone")])
        XCTAssertEqual(machine.localAnswerPrepared(), [.discardLocalAnswer], "a file opened late is closed")
    }

    func testStalledRequestBodyOfALocalAnswerIs408() {
        var (machine, _) = routed(ExchangeFixtures.post, .answerLocally(needsPreparation: false), fields: ExchangeFixtures.lengthFields)
        XCTAssertTrue(machine.awaitsClientBody)
        XCTAssertEqual(machine.requestStalled(seconds: 30),
                       [.cancelWork, .discardLocalAnswer, .record(error: ProxyFailure.requestBodyTimeout(seconds: 30).message),
                        .answer(.requestBodyTimeout(seconds: 30), keepAlive: false, requestEnded: false)])
    }
}
