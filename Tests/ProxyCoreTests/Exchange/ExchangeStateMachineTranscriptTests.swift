import XCTest
@testable import ProxyCore

/// Transcripts of `ExchangeStateMachine` alone, with no channel: each test drives the machine
/// to a state and asserts the exact actions every event returns there.
///
/// The "front" here is the test itself: neither an HTTP/1 connection nor an HTTP/2 stream,
/// which is what shows the machine does not depend on one.
final class ExchangeStateMachineTranscriptTests: XCTestCase {
    typealias Machine = ExchangeStateMachine


    /// A machine past routing: forwarding to `origin.test`.
    func forwarding(_ request: Machine.Request = ExchangeFixtures.get, _ route: Machine.Forwarding = ExchangeFixtures.origin,
                    fields: [(name: String, value: String)] = ExchangeFixtures.noFields,
                    file: StaticString = #filePath, line: UInt = #line) -> Machine {
        var machine = Machine(request: request)
        XCTAssertEqual(machine.start(fields: fields), [.route], file: file, line: line)
        _ = machine.routeDecided(.forward(route))
        return machine
    }

    /// Forwarding on a fresh connection, the request head sent.
    func connected(_ request: Machine.Request = ExchangeFixtures.get, _ route: Machine.Forwarding = ExchangeFixtures.origin,
                   fields: [(name: String, value: String)] = ExchangeFixtures.noFields) -> Machine {
        var machine = forwarding(request, route, fields: fields)
        _ = machine.upstreamConnecting()
        _ = machine.upstreamConnected(reused: false)
        return machine
    }

    /// A GET whose request has ended and whose 200 response head (Content-Length) was written.
    func relaying(keepAlive: Bool = true, reused: Bool = false) -> Machine {
        var machine = forwarding()
        if reused {
            _ = machine.upstreamConnected(reused: true)
        } else {
            _ = machine.upstreamConnecting()
            _ = machine.upstreamConnected(reused: false)
        }
        _ = machine.clientEnd()
        let plan = ResponseHeadPlan(framing: .init(framing: .contentLength(5), advertisedLength: nil, isCanonical: true),
                                    close: false, switchingProtocols: false)
        XCTAssertEqual(machine.upstreamHead(status: 200, fields: ExchangeFixtures.lengthFields, keepAlive: keepAlive, bindsConnection: false),
                       [.prepareResponseHead(plan), .writeResponseHead])
        return machine
    }

    // MARK: start and routing

    func testStartDecidesFramingThenAsksForRules() {
        var machine = Machine(request: ExchangeFixtures.post)
        XCTAssertEqual(machine.start(fields: ExchangeFixtures.lengthFields), [.route])
        XCTAssertEqual(machine.requestFraming?.framing, .contentLength(5))
        XCTAssertEqual(machine.phase, .routing)
        XCTAssertEqual(machine.start(fields: ExchangeFixtures.lengthFields), [], "a second start does nothing")
    }

    func testAmbiguousFramingIsRefusedRecordedAndClosedBeforeRules() {
        var machine = Machine(request: ExchangeFixtures.post)
        let actions = machine.start(fields: [(name: "Content-Length", value: "5"),
                                             (name: "Transfer-Encoding", value: "chunked")])
        guard case .record(let error?) = actions.first, case .answer(let failure, false, false) = actions.last else {
            return XCTFail("\(actions)")
        }
        XCTAssertEqual(failure.statusCode, 400)
        XCTAssertEqual(error, failure.message)
        XCTAssertEqual(actions.count, 2)
        XCTAssertEqual(machine.phase, .finished)
        XCTAssertEqual(machine.routeDecided(.forward(ExchangeFixtures.origin)), [], "no rules after a refusal")
        XCTAssertEqual(machine.clientBody(), [])
        XCTAssertEqual(machine.clientClosed(reason: "gone"), [])
    }

    func testUnsupportedTransferCodingIs501() {
        var machine = Machine(request: ExchangeFixtures.post)
        let actions = machine.start(fields: [(name: "Transfer-Encoding", value: "gzip, chunked")])
        guard case .answer(let failure, false, false) = actions.last else { return XCTFail("\(actions)") }
        XCTAssertEqual(failure.statusCode, 501)
    }

    func testForwardOpensOrTakesAConnection() {
        var machine = Machine(request: ExchangeFixtures.get)
        _ = machine.start(fields: ExchangeFixtures.noFields)
        XCTAssertEqual(machine.routeDecided(.forward(ExchangeFixtures.origin)), [.openUpstream(allowReuse: true)])
        XCTAssertEqual(machine.routeDecided(.forward(ExchangeFixtures.origin)), [], "routed once")
    }

    func testRefusedRouteIsRecordedAndAnswered() {
        var machine = Machine(request: ExchangeFixtures.get)
        _ = machine.start(fields: ExchangeFixtures.noFields)
        let failure = ProxyFailure.notImplemented(reason: "HTTPS interception is off")
        XCTAssertEqual(machine.routeDecided(.refuse(failure)),
                       [.record(error: failure.message), .answer(failure, keepAlive: false, requestEnded: false)])
    }

    // MARK: the request while connecting, connected

    func testBodyBeforeTheConnectionIsBufferedThenSentInOrder() {
        var machine = forwarding(ExchangeFixtures.post, fields: ExchangeFixtures.lengthFields)
        XCTAssertEqual(machine.upstreamConnecting(), [.pauseClientReads(.connecting)])
        XCTAssertEqual(machine.clientBody(), [.bufferRequestBody])
        XCTAssertEqual(machine.clientEnd(), [], "the end waits for the connection")
        XCTAssertEqual(machine.clientReadComplete(), [], "nothing to flush yet")
        XCTAssertEqual(machine.upstreamConnected(reused: false),
                       [.sendRequestHead, .sendBufferedRequestBody, .sendRequestEnd, .flushUpstream,
                        .resumeClientReads(.connecting)], "reads resume last: they may deliver body parts at once")
    }

    func testBodyOnAConnectedExchangeIsSentAndFlushedPerRead() {
        var machine = connected(ExchangeFixtures.post, fields: ExchangeFixtures.lengthFields)
        XCTAssertEqual(machine.clientBody(), [.sendRequestBody])
        XCTAssertEqual(machine.clientReadComplete(), [.flushUpstream])
        XCTAssertEqual(machine.clientEnd(), [.sendRequestEnd, .flushUpstream])
        XCTAssertEqual(machine.clientEnd(), [], "one end")
        XCTAssertEqual(machine.clientBody(), [], "nothing after the end")
    }

    func testPooledConnectionSendsAtOnceWithoutPausing() {
        var machine = forwarding()
        XCTAssertEqual(machine.upstreamConnected(reused: true), [.sendRequestHead, .flushUpstream])
        XCTAssertEqual(machine.clientEnd(), [.sendRequestEnd, .flushUpstream])
    }

    func testBusyOriginPausesClientReadsUntilWritable() {
        var machine = connected(ExchangeFixtures.post, fields: ExchangeFixtures.lengthFields)
        _ = machine.clientBody()
        XCTAssertEqual(machine.upstreamWritabilityChanged(isWritable: false), [.pauseClientReads(.upstreamBusy)])
        XCTAssertEqual(machine.upstreamWritabilityChanged(isWritable: false), [], "paused once")
        XCTAssertEqual(machine.upstreamWritabilityChanged(isWritable: true), [.resumeClientReads(.upstreamBusy)])
        XCTAssertEqual(machine.upstreamWritabilityChanged(isWritable: true), [], "resumed once")
    }

    func testConnectFailureResumesReadsAndAnswersWithTheReason() {
        var machine = forwarding()
        _ = machine.upstreamConnecting()
        _ = machine.clientEnd()
        let failure = ProxyFailure.connectionRefused(host: "origin.test", port: 80)
        XCTAssertEqual(machine.upstreamConnectFailed(failure),
                       [.resumeClientReads(.connecting), .record(error: failure.message),
                        .answer(failure, keepAlive: true, requestEnded: true)])
        XCTAssertEqual(machine.upstreamConnected(reused: false), [.closeUpstream], "a late connection is closed")
    }

    func testClientLeavingWhileConnectingClosesTheLateConnection() {
        var machine = forwarding()
        _ = machine.upstreamConnecting()
        XCTAssertEqual(machine.clientClosed(reason: "gone"), [.record(error: "gone")])
        XCTAssertEqual(machine.upstreamConnected(reused: false), [.closeUpstream])
        XCTAssertEqual(machine.upstreamConnectFailed(.connectionRefused(host: "o", port: 1)), [])
    }

    // MARK: responses

    func testResponseRelayedAndConnectionPooled() {
        var machine = relaying()
        XCTAssertEqual(machine.upstreamBody(), [.writeResponseBody])
        XCTAssertEqual(machine.upstreamReadComplete(), [.flushClient])
        XCTAssertEqual(machine.upstreamEnd(),
                       [.checkInUpstream(boundToClient: false), .record(error: nil),
                        .completeResponse(close: false, requestEnded: true)])
        XCTAssertEqual(machine.phase, .finished)
        XCTAssertEqual(machine.upstreamEnd(), [])
        XCTAssertEqual(machine.clientClosed(reason: "gone"), [], "recorded once")
    }

    func testOriginClosingMeansNoPooling() {
        var machine = relaying(keepAlive: false)
        XCTAssertEqual(machine.upstreamEnd().first, .closeUpstream)
    }

    func testBodyReadUntilCloseIsNeverPooled() {
        var machine = connected()
        _ = machine.clientEnd()
        let actions = machine.upstreamHead(status: 200, fields: ExchangeFixtures.noFields, keepAlive: true, bindsConnection: false)
        guard case .prepareResponseHead(let plan) = actions.first else { return XCTFail("\(actions)") }
        XCTAssertEqual(plan.framing.framing, .untilClose)
        XCTAssertEqual(machine.upstreamEnd().first, .closeUpstream)
    }

    func testResponseBeforeTheRequestEndedClosesBothSides() {
        var machine = connected(ExchangeFixtures.post, fields: ExchangeFixtures.lengthFields)
        _ = machine.clientBody()
        _ = machine.upstreamHead(status: 200, fields: ExchangeFixtures.lengthFields, keepAlive: true, bindsConnection: false)
        XCTAssertEqual(machine.upstreamEnd(),
                       [.closeUpstream, .record(error: nil), .completeResponse(close: true, requestEnded: false)])
    }

    func testBoundConnectionGoesBackToTheClient() {
        var machine = connected()
        _ = machine.clientEnd()
        _ = machine.upstreamHead(status: 401, fields: ExchangeFixtures.lengthFields, keepAlive: true, bindsConnection: true)
        XCTAssertEqual(machine.upstreamEnd().first, .checkInUpstream(boundToClient: true))
    }

    func testSlowClientPausesOriginReads() {
        var machine = relaying()
        XCTAssertEqual(machine.clientWritabilityChanged(isWritable: false), [.pauseUpstreamReads])
        XCTAssertEqual(machine.clientWritabilityChanged(isWritable: false), [])
        XCTAssertEqual(machine.clientWritabilityChanged(isWritable: true), [.resumeUpstreamReads])
        XCTAssertEqual(machine.clientWritabilityChanged(isWritable: true), [])
    }

    func testInterimResponsesRelayedUpToALimit() {
        var machine = connected()
        _ = machine.clientEnd()
        for _ in 0..<Machine.maxInterimResponses {
            XCTAssertEqual(machine.upstreamHead(status: 102, fields: ExchangeFixtures.noFields, keepAlive: true, bindsConnection: false),
                           [.writeInterimHead, .flushClient])
        }
        let actions = machine.upstreamHead(status: 102, fields: ExchangeFixtures.noFields, keepAlive: true, bindsConnection: false)
        guard case .answer(let failure, _, _) = actions.last else { return XCTFail("\(actions)") }
        XCTAssertEqual(failure.statusCode, 502)
        XCTAssertEqual(actions.first, .closeUpstream)
    }

    func testInterimNotRelayedToHTTP10() {
        let request = ExchangeFixtures.request("GET", minorVersion: 0, keepAlive: false, expectsContinue: false, asksUpgrade: false)
        var machine = connected(request)
        XCTAssertEqual(machine.upstreamHead(status: 100, fields: ExchangeFixtures.noFields, keepAlive: true, bindsConnection: false), [])
    }

    /// An HTTP/2 stream (version 2.0, one request, never keep-alive in HTTP/1's sense) gets
    /// interim responses as an HTTP/1.1 client does, and its `Expect: 100-continue` is honoured.
    func testHTTP2StreamGetsInterimResponsesAndContinue() {
        let request = ExchangeFixtures.request("POST", majorVersion: 2, minorVersion: 0, keepAlive: false, expectsContinue: true)
        var machine = connected(request)
        XCTAssertEqual(machine.upstreamHead(status: 103, fields: ExchangeFixtures.noFields, keepAlive: true, bindsConnection: false),
                       [.writeInterimHead, .flushClient])
        var local = Machine(request: request)
        _ = local.start(fields: ExchangeFixtures.lengthFields)
        XCTAssertEqual(local.routeDecided(.answerLocally(needsPreparation: false)), [.writeContinue])
    }

    /// On a stream of an HTTP/2 origin connection, a client that expects `100 Continue` gets it
    /// from the proxy at once, and the origin's own 100 later is not sent twice; on an HTTP/1
    /// connection the origin's 100 is awaited; an HTTP/1.0 client is never sent one.
    func testContinueAnsweredByTheProxyOnAnHTTP2Stream() {
        let request = ExchangeFixtures.request("POST", minorVersion: 1, keepAlive: true, expectsContinue: true, asksUpgrade: false)
        var machine = Machine(request: request)
        _ = machine.start(fields: ExchangeFixtures.lengthFields)
        XCTAssertEqual(machine.routeDecided(.forward(ExchangeFixtures.origin)), [.openUpstream(allowReuse: true)])
        XCTAssertEqual(machine.upstreamConnecting(), [.pauseClientReads(.connecting)])
        XCTAssertEqual(machine.upstreamConnected(reused: true, multiplexed: true),
                       [.sendRequestHead, .flushUpstream, .writeContinue, .resumeClientReads(.connecting)])
        XCTAssertEqual(machine.upstreamHead(status: 100, fields: ExchangeFixtures.noFields, keepAlive: true, bindsConnection: false),
                       [], "the origin's own 100 is not sent a second time")

        var overHTTP1 = Machine(request: request)
        _ = overHTTP1.start(fields: ExchangeFixtures.lengthFields)
        _ = overHTTP1.routeDecided(.forward(ExchangeFixtures.origin))
        _ = overHTTP1.upstreamConnecting()
        XCTAssertEqual(overHTTP1.upstreamConnected(reused: false),
                       [.sendRequestHead, .flushUpstream, .resumeClientReads(.connecting)])

        let old = ExchangeFixtures.request("POST", minorVersion: 0, keepAlive: false, expectsContinue: true, asksUpgrade: false)
        var http10 = Machine(request: old)
        _ = http10.start(fields: ExchangeFixtures.lengthFields)
        _ = http10.routeDecided(.forward(ExchangeFixtures.origin))
        _ = http10.upstreamConnecting()
        XCTAssertFalse(http10.upstreamConnected(reused: false, multiplexed: true).contains(.writeContinue))
    }

    func testHTTP10ClientOfABodyWithoutLengthGetsAClose() {
        let request = ExchangeFixtures.request("GET", minorVersion: 0, keepAlive: true, expectsContinue: false, asksUpgrade: false)
        var machine = connected(request)
        _ = machine.clientEnd()
        let actions = machine.upstreamHead(status: 200, fields: [(name: "Transfer-Encoding", value: "chunked")],
                                           keepAlive: true, bindsConnection: false)
        guard case .prepareResponseHead(let plan) = actions.first else { return XCTFail("\(actions)") }
        XCTAssertTrue(plan.close)
    }

    func testStatusBelow100AndBadFramingAre502() {
        for (status, fields) in [(99, ExchangeFixtures.noFields), (200, [(name: "Transfer-Encoding", value: "gzip")])] {
            var machine = connected()
            _ = machine.clientEnd()
            let actions = machine.upstreamHead(status: status, fields: fields, keepAlive: true, bindsConnection: false)
            guard case .answer(let failure, _, _) = actions.last else { return XCTFail("\(actions)") }
            XCTAssertEqual(failure.statusCode, 502, "\(status)")
            XCTAssertEqual(actions.first, .closeUpstream)
        }
    }

    func testUnrequestedUpgradeIsRefused() {
        var machine = connected()
        _ = machine.clientEnd()
        let actions = machine.upstreamHead(status: 101, fields: ExchangeFixtures.noFields, keepAlive: true, bindsConnection: false)
        guard case .answer(let failure, _, _) = actions.last else { return XCTFail("\(actions)") }
        XCTAssertTrue(failure.message.contains("did not ask to upgrade"), failure.message)
    }

    func testRequestedUpgradeBecomesAByteRelay() {
        var route = ExchangeFixtures.origin
        route.forwardsUpgrade = true
        var machine = connected(ExchangeFixtures.get, route)
        _ = machine.clientEnd()
        let plan = ResponseHeadPlan(framing: .init(framing: .none, advertisedLength: nil, isCanonical: true), close: false,
                                    switchingProtocols: true)
        XCTAssertEqual(machine.upstreamHead(status: 101, fields: ExchangeFixtures.noFields, keepAlive: true, bindsConnection: false),
                       [.prepareResponseHead(plan), .writeResponseHead])
        XCTAssertEqual(machine.upstreamEnd(), [.record(error: nil), .switchToByteRelay])
    }

    func testUpgradeBeforeTheRequestBodyEndedIsRefused() {
        var route = ExchangeFixtures.origin
        route.forwardsUpgrade = true
        var machine = connected(ExchangeFixtures.post, route, fields: ExchangeFixtures.lengthFields)
        let actions = machine.upstreamHead(status: 101, fields: ExchangeFixtures.noFields, keepAlive: true, bindsConnection: false)
        guard case .answer(_, let keepAlive, _) = actions.last else { return XCTFail("\(actions)") }
        XCTAssertFalse(keepAlive, "an upgrade request's connection cannot carry another request")
    }

    // MARK: failures and retries

    func testClosedPooledConnectionRetriesASafeRequestOnce() {
        var machine = forwarding()
        _ = machine.upstreamConnected(reused: true)
        _ = machine.clientEnd()
        let closed = ProxyFailure.upstreamClosed(host: "origin.test", port: 80)
        XCTAssertEqual(machine.upstreamFailed(closed, mayRetry: true), [.openUpstream(allowReuse: false)])
        XCTAssertEqual(machine.upstreamConnecting(), [.pauseClientReads(.connecting)])
        XCTAssertEqual(machine.upstreamConnected(reused: false),
                       [.sendRequestHead, .sendRequestEnd, .flushUpstream, .resumeClientReads(.connecting)])
        let actions = machine.upstreamFailed(closed, mayRetry: true)
        XCTAssertEqual(actions, [.record(error: closed.message), .answer(closed, keepAlive: true, requestEnded: true)],
                       "a fresh connection is not retried")
    }

    func testNoRetryForABodyATimeoutOrAfterAResponseBegan() {
        let closed = ProxyFailure.upstreamClosed(host: "origin.test", port: 80)
        var post = forwarding(ExchangeFixtures.post, fields: ExchangeFixtures.lengthFields)
        _ = post.upstreamConnected(reused: true)
        _ = post.clientBody()
        XCTAssertNotEqual(post.upstreamFailed(closed, mayRetry: true).first, .openUpstream(allowReuse: false))

        var timedOut = forwarding()
        _ = timedOut.upstreamConnected(reused: true)
        XCTAssertNotEqual(timedOut.upstreamFailed(closed, mayRetry: false).first, .openUpstream(allowReuse: false))

        var interim = forwarding()
        _ = interim.upstreamConnected(reused: true)
        _ = interim.clientEnd()
        _ = interim.upstreamHead(status: 100, fields: ExchangeFixtures.noFields, keepAlive: true, bindsConnection: false)
        XCTAssertNotEqual(interim.upstreamFailed(closed, mayRetry: true).first, .openUpstream(allowReuse: false))
    }

    func testFailureAfterTheHeadCutsTheClientAfterFlushing() {
        var machine = relaying()
        let closed = ProxyFailure.upstreamClosed(host: "origin.test", port: 80)
        XCTAssertEqual(machine.upstreamFailed(closed, mayRetry: true),
                       [.record(error: "\(closed.message) (response incomplete)"), .flushClient,
                        .abortClient(reason: closed.message)])
    }

    func testClientClosingMidResponseClosesTheOrigin() {
        var machine = relaying()
        XCTAssertEqual(machine.clientClosed(reason: "gone"), [.closeUpstream, .record(error: "gone")])
        XCTAssertEqual(machine.upstreamBody(), [])
        XCTAssertEqual(machine.upstreamEnd(), [])
    }

    func testMalformedBodyBeforeAResponseIs400AndClose() {
        var machine = connected(ExchangeFixtures.post, fields: ExchangeFixtures.lengthFields)
        let failure = ProxyFailure.badRequest(reason: "bad chunk")
        XCTAssertEqual(machine.requestFailed(failure),
                       [.closeUpstream, .record(error: failure.message),
                        .answer(failure, keepAlive: false, requestEnded: false)])
    }

    func testMalformedBodyAfterTheResponseHeadCutsTheConnection() {
        var machine = connected(ExchangeFixtures.post, fields: ExchangeFixtures.lengthFields)
        _ = machine.upstreamHead(status: 200, fields: ExchangeFixtures.lengthFields, keepAlive: true, bindsConnection: false)
        let failure = ProxyFailure.badRequest(reason: "bad chunk")
        XCTAssertEqual(machine.requestFailed(failure),
                       [.closeUpstream, .record(error: failure.message), .abortClient(reason: failure.message)])
    }

    func testStalledBodyIs408OrTheOriginsStallWhenItStoppedReading() {
        var machine = connected(ExchangeFixtures.post, fields: ExchangeFixtures.lengthFields)
        XCTAssertTrue(machine.awaitsClientBody)
        let stalled = machine.requestStalled(seconds: 30)
        XCTAssertEqual(stalled.last, .answer(.requestBodyTimeout(seconds: 30), keepAlive: false, requestEnded: false))

        var busy = connected(ExchangeFixtures.post, fields: ExchangeFixtures.lengthFields)
        _ = busy.clientBody()
        _ = busy.upstreamWritabilityChanged(isWritable: false)
        XCTAssertEqual(busy.requestStalled(seconds: 30).last,
                       .answer(.upstreamStalledReading(host: "origin.test", port: 80, seconds: 30),
                               keepAlive: false, requestEnded: false))
    }

    func testNoStallWhileConnectingOrAfterTheRequestEnded() {
        var connecting = forwarding(ExchangeFixtures.post, fields: ExchangeFixtures.lengthFields)
        _ = connecting.upstreamConnecting()
        XCTAssertFalse(connecting.awaitsClientBody)
        XCTAssertEqual(connecting.requestStalled(seconds: 30), [])
        var ended = relaying()
        XCTAssertEqual(ended.requestStalled(seconds: 30), [])
    }

    func testInputClosedMakesTheResponseClose() {
        var machine = connected()
        _ = machine.clientEnd()
        XCTAssertEqual(machine.clientInputClosed(), [])
        let actions = machine.upstreamHead(status: 200, fields: ExchangeFixtures.lengthFields, keepAlive: true, bindsConnection: false)
        guard case .prepareResponseHead(let plan) = actions.first else { return XCTFail("\(actions)") }
        XCTAssertTrue(plan.close)
    }
}
