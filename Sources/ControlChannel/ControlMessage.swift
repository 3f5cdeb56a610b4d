import Foundation
import ProxyModel

/// One command sent over the control channel: a JSON object on one line.
///
/// `command` names what to do; the other fields belong to commands that use them and are left
/// out otherwise. Commands now:
/// - `replay`: send the flows `ids` again through the running proxy, each `count` times, at most
///   `concurrency` at once, with `noRules` and `allowTruncated` as `proxyapp replay` takes them.
/// - `send`: send `request` (a composed request) through the running proxy; the reply's `lines`
///   say what came back and `response` carries it.
/// - `intercept`: sets the breakpoint filter to `filter` (the filter language; empty clears it).
/// - `holds`: lists what is held at breakpoints (`held`, with the filter in force).
/// - `accept` / `kill`: decides for the held exchanges `ids` (`accept` with no ids: all of them).
/// - `held`: what is held as `ids[0]`: the request as it will be forwarded (`heldRequest` in the
///   reply), or the response as the client will get it (`heldResponse`).
/// - `edit`: the request held as `ids[0]` goes on as `request` says (same origin), or the response
///   held as `ids[0]` goes to the client as `response` says.
/// - `ping`: answered `ok` (clients use it to see that a proxy is there).
public struct ControlRequest: Codable, Sendable, Hashable {
    public var command: String
    public var ids: [Int64]?
    public var count: Int?
    public var concurrency: Int?
    public var noRules: Bool?
    public var allowTruncated: Bool?
    public var request: ControlHTTPRequest?
    /// `edit` of a held response: the response to send instead.
    public var response: ControlHTTPResponse?
    /// `intercept`: the breakpoint filter; empty clears it.
    public var filter: String?

    public init(command: String, ids: [Int64]? = nil, count: Int? = nil, concurrency: Int? = nil,
                noRules: Bool? = nil, allowTruncated: Bool? = nil, request: ControlHTTPRequest? = nil,
                response: ControlHTTPResponse? = nil, filter: String? = nil) {
        self.filter = filter
        self.response = response
        self.command = command
        self.ids = ids
        self.count = count
        self.concurrency = concurrency
        self.noRules = noRules
        self.allowTruncated = allowTruncated
        self.request = request
    }
}

/// An HTTP request or response as the control channel carries it: header pairs in order, the
/// body in base64 (JSON has no bytes).
public struct ControlHTTPRequest: ControlHTTPMessage, Codable, Sendable, Hashable {
    public var method: String
    public var url: String
    /// `[name, value]` pairs, in order.
    public var headers: [[String]]
    public var body: String
    /// The flow it was edited from (the TUI's `R`): the new flow links to it.
    public var replayOf: Int64?

    public init(method: String, url: String, headers: [(String, String)], body: [UInt8]) {
        self.method = method
        self.url = url
        self.headers = headers.map { [$0.0, $0.1] }
        self.body = Data(body).base64EncodedString()
    }
}

/// A response as the control channel carries it (a held one, or its edit): header pairs in
/// order, the body in base64.
public struct ControlHTTPResponse: ControlHTTPMessage, Codable, Sendable, Hashable {
    public var status: Int
    public var reason: String
    /// `[name, value]` pairs, in order.
    public var headers: [[String]]
    public var body: String

    public init(status: Int, reason: String, headers: [(String, String)], body: [UInt8]) {
        self.status = status
        self.reason = reason
        self.headers = headers.map { [$0.0, $0.1] }
        self.body = Data(body).base64EncodedString()
    }
}

/// What requests and responses on the control channel share: headers as `[name, value]`
/// pairs (JSON has no tuples) and a body in base64 (JSON has no bytes).
public protocol ControlHTTPMessage {
    var headers: [[String]] { get }
    var body: String { get }
}

extension ControlHTTPMessage {
    /// The headers in order; entries that are not pairs are left out (`hasMalformedHeaders`).
    public var headerPairs: [(String, String)] {
        headers.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }
    }

    /// Some header is not a `[name, value]` pair: the message is refused, not sent without it.
    public var hasMalformedHeaders: Bool { headers.contains { $0.count != 2 } }

    /// The body's bytes; nil when `body` is not base64.
    public var bodyBytes: [UInt8]? { Data(base64Encoded: body).map { [UInt8]($0) } }
}

/// The answer to one `ControlRequest`: a JSON object on one line.
public struct ControlReply: Codable, Sendable, Hashable {
    public var ok: Bool
    /// What to print, one entry per line (already in words).
    public var lines: [String]
    /// Why the command failed, in words; nil when `ok`.
    public var error: String?
    /// `send`: the response that came back (nil for other commands, and when none came).
    public var status: Int?
    public var reason: String?
    public var responseHeaders: [[String]]?
    public var responseBody: String?
    /// `holds`: what is held at breakpoints, oldest first, and the filter in force (nil: none).
    public var held: [HeldExchange]?
    public var filter: String?
    /// `held`: the held request's content.
    public var heldRequest: ControlHTTPRequest?
    /// `held`: the held response's content.
    public var heldResponse: ControlHTTPResponse?

    public init(ok: Bool, lines: [String] = [], error: String? = nil) {
        self.ok = ok
        self.lines = lines
        self.error = error
    }

    public static func failure(_ reason: String) -> ControlReply {
        ControlReply(ok: false, error: reason)
    }
}
