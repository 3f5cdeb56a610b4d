@testable import ProxyCore
import XCTest

// MARK: the alphabet

/// Response heads an origin may send.
enum Head: Hashable, CustomStringConvertible {
    case continue100, processing102, status99, gzip, contentLength, chunked, untilClose, switching101, noContent204

    var status: Int {
        switch self {
        case .continue100: return 100
        case .processing102: return 102
        case .status99: return 99
        case .switching101: return 101
        case .noContent204: return 204
        case .gzip, .contentLength, .chunked, .untilClose: return 200
        }
    }

    var fields: [(name: String, value: String)] {
        switch self {
        case .gzip: return [("Transfer-Encoding", "gzip")]
        case .contentLength: return [("Content-Length", "5")]
        case .chunked: return [("Transfer-Encoding", "chunked")]
        case .switching101: return [("Upgrade", "websocket"), ("Connection", "Upgrade")]
        case .continue100, .processing102, .status99, .untilClose, .noContent204: return []
        }
    }

    var isInterim: Bool { self == .continue100 || self == .processing102 }

    var description: String {
        switch self {
        case .gzip: return "200 TE:gzip"
        case .contentLength: return "200 CL"
        case .chunked: return "200 chunked"
        case .untilClose: return "200 until-close"
        default: return String(status)
        }
    }
}

struct HeadEvent: Hashable, CustomStringConvertible {
    var head: Head
    var keepAlive: Bool
    var binds: Bool

    init(_ head: Head, keepAlive: Bool, binds: Bool) {
        self.head = head
        self.keepAlive = keepAlive
        self.binds = binds
    }

    static let all: [HeadEvent] = [Head.continue100, .processing102, .status99, .gzip].map {
        HeadEvent($0, keepAlive: true, binds: false)
    } + [Head.contentLength, .chunked, .untilClose, .switching101, .noContent204].map {
        HeadEvent($0, keepAlive: true, binds: false)
    } + [HeadEvent(.contentLength, keepAlive: false, binds: false), HeadEvent(.chunked, keepAlive: false, binds: false),
         HeadEvent(.contentLength, keepAlive: true, binds: true)]

    var description: String { "\(head)\(keepAlive ? "" : " close")\(binds ? " binds" : "")" }
}

enum Event: Hashable {
    case start, routeDecided
    case clientBody, clientEnd, clientReadComplete, clientInputClosed, clientClosed, requestFailed, requestStalled
    case clientWritable(Bool), upstreamWritable(Bool)
    case upstreamConnecting, upstreamConnected(reused: Bool, bound: Bool), upstreamConnectFailed
    /// A stream of an HTTP/2 origin connection (`upstreamConnected(multiplexed: true)`).
    case upstreamStreamOpened(reused: Bool)
    case upstreamHead(HeadEvent), upstreamBody, upstreamReadComplete, upstreamEnd, upstreamFailed(mayRetry: Bool)
    case responseHoldDecided(Bool), requestReleased, responseReleased, holdAborted, holdTimedOut
    case requestHoldOverflowed, responseHoldOverflowed
    case localAnswerPrepared, localAnswerFinished, localAnswerFailed, writeStalled
}

// MARK: start configurations

enum RouteKind: String {
    case plain, holdsRequest, mayHoldResponse, forwardsUpgrade
}

enum StartRoute: CustomStringConvertible {
    case forward(RouteKind)
    case local(needsPreparation: Bool)
    case refuse

    var description: String {
        switch self {
        case .forward(let kind): return "forward \(kind.rawValue)"
        case .local(let needsPreparation): return needsPreparation ? "local (prepared)" : "local"
        case .refuse: return "refuse"
        }
    }

    var route: ExchangeStateMachine.Route {
        switch self {
        case .forward(let kind):
            return .forward(.init(host: "origin", port: 80, forwardsUpgrade: kind == .forwardsUpgrade,
                                  holdsRequest: kind == .holdsRequest, mayHoldResponse: kind == .mayHoldResponse))
        case .local(let needsPreparation): return .answerLocally(needsPreparation: needsPreparation)
        case .refuse: return .refuse(.notImplemented(reason: "ftp:// cannot be forwarded"))
        }
    }
}

struct StartConfig {
    var name: String
    var request: ExchangeStateMachine.Request
    var fields: [(name: String, value: String)]
    var bodyParts: Int
    var route: StartRoute

    static func request(_ method: String, minor: Int = 1, keepAlive: Bool = true, expects: Bool = false,
                        upgrade: Bool = false) -> ExchangeStateMachine.Request {
        .init(method: method, majorVersion: 1, minorVersion: minor, keepAlive: keepAlive,
              expectsContinue: expects, asksUpgrade: upgrade)
    }

    static func get(_ route: StartRoute) -> StartConfig {
        StartConfig(name: "GET", request: request("GET"), fields: [("Host", "origin")], bodyParts: 0, route: route)
    }

    static let requests: [(String, ExchangeStateMachine.Request, [(name: String, value: String)], Int)] = [
        ("GET", request("GET"), [("Host", "origin")], 0),
        ("POST CL", request("POST"), [("Content-Length", "10")], 2),
        ("HTTP/1.0 GET", request("GET", minor: 0, keepAlive: false), [], 0),
        ("HEAD", request("HEAD"), [], 0),
        ("GET Expect", request("GET", expects: true), [("Expect", "100-continue"), ("Content-Length", "5")], 1),
        ("POST CL+TE", request("POST"), [("Content-Length", "3"), ("Transfer-Encoding", "chunked")], 1),
        ("GET Upgrade", request("GET", upgrade: true), [("Upgrade", "websocket"), ("Connection", "Upgrade")], 0),
    ]

    static let routes: [StartRoute] = [.forward(.plain), .forward(.holdsRequest), .forward(.mayHoldResponse),
                                       .local(needsPreparation: false), .local(needsPreparation: true), .refuse]

    /// Every request with every route; an upgrade is forwarded only for the request asking one.
    static let all: [StartConfig] = requests.flatMap { name, request, fields, parts in
        (request.asksUpgrade ? routes + [.forward(.forwardsUpgrade)] : routes).map {
            StartConfig(name: "\(name) → \($0)", request: request, fields: fields, bodyParts: parts, route: $0)
        }
    }
}

