import XCTest
@testable import ProxyCore

/// The machine driven by a front that is neither an HTTP/1 connection nor an HTTP/2 stream: a
/// replay, with no client connection at all. The front below carries out the actions against a
/// scripted origin and keeps what a replay keeps (the response, the record); nothing in the
/// machine had to change for it.
final class ExchangeStateMachineFrontTests: XCTestCase {
    /// A replay's front: the request is known whole up front, the response goes into `received`.
    struct ReplayFront {
        var machine: ExchangeStateMachine
        /// What the origin sends once the request reached it: heads (status, fields) or bodies.
        var script: [OriginPart]
        var received: [String] = []
        var records: [String?] = []
        var sentUpstream: [String] = []
        var connectionsOpened = 0
        var completed = false

        enum OriginPart {
            case head(Int, [(name: String, value: String)])
            case body(String)
            case end
            case closed
        }

        init(_ request: ExchangeStateMachine.Request, script: [OriginPart]) {
            machine = ExchangeStateMachine(request: request)
            self.script = script
        }

        mutating func run(fields: [(name: String, value: String)], body: [String]) {
            perform(machine.start(fields: fields))
            for part in body {
                perform(machine.clientBody(), body: part)
            }
            perform(machine.clientEnd())
        }

        mutating func perform(_ actions: [ExchangeAction], body: String? = nil) {
            for action in actions {
                switch action {
                case .route:
                    perform(machine.routeDecided(.forward(.init(host: "origin.test", port: 80))))
                case .openUpstream:
                    connectionsOpened += 1
                    perform(machine.upstreamConnected(reused: false))
                case .sendRequestHead: sentUpstream.append("head")
                case .sendRequestBody: sentUpstream.append(body!)
                case .sendRequestEnd:
                    sentUpstream.append("end")
                    playOrigin()
                case .prepareResponseHead(let plan): received.append("head close=\(plan.close)")
                case .writeResponseBody: received.append(body!)
                case .record(let error): records.append(error)
                case .completeResponse: completed = true
                case .answer(let failure, _, _): received.append("answer \(failure.statusCode)")
                default: break
                }
            }
        }

        /// The origin answers once the whole request reached it.
        mutating func playOrigin() {
            while !script.isEmpty {
                switch script.removeFirst() {
                case .head(let status, let fields):
                    perform(machine.upstreamHead(status: status, fields: fields, keepAlive: true, bindsConnection: false))
                case .body(let text):
                    perform(machine.upstreamBody(), body: text)
                case .end:
                    perform(machine.upstreamEnd())
                case .closed:
                    perform(machine.upstreamFailed(.upstreamClosed(host: "origin.test", port: 80), mayRetry: false))
                }
            }
        }
    }

    func testAReplayRunsWithNoClientConnection() {
        var front = ReplayFront(ExchangeFixtures.post, script: [
            .head(200, [(name: "Content-Length", value: "5")]), .body("hello"), .end,
        ])
        front.run(fields: [(name: "Content-Length", value: "4")], body: ["ping"])
        XCTAssertEqual(front.sentUpstream, ["head", "ping", "end"])
        XCTAssertEqual(front.received, ["head close=false", "hello"])
        XCTAssertEqual(front.records, [nil], "recorded once, without an error")
        XCTAssertTrue(front.completed)
        XCTAssertEqual(front.connectionsOpened, 1)
        XCTAssertEqual(front.machine.phase, .finished)
    }

    func testAReplayWhoseOriginFailsIsAnsweredAndRecordedOnce() {
        var front = ReplayFront(ExchangeFixtures.get, script: [.closed])
        front.run(fields: [], body: [])
        XCTAssertEqual(front.received, ["answer 502"])
        XCTAssertEqual(front.records.count, 1)
        XCTAssertNotNil(front.records.first ?? nil)
        XCTAssertFalse(front.completed)
    }

    func testAReplayWithAmbiguousFramingNeverReachesTheOrigin() {
        var front = ReplayFront(ExchangeFixtures.post, script: [.head(200, []), .end])
        front.run(fields: [(name: "Content-Length", value: "4"), (name: "Content-Length", value: "5")], body: ["ping"])
        XCTAssertEqual(front.connectionsOpened, 0)
        XCTAssertEqual(front.sentUpstream, [])
        XCTAssertEqual(front.received, ["answer 400"])
        XCTAssertEqual(front.records.count, 1)
    }
}
