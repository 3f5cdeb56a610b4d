import BodyCodec
import Foundation
import ProxyModel

extension FilterExpression {
    /// Evaluates the expression against one flow, in Swift (every predicate).
    public func matches(_ flow: Flow) -> Bool {
        matches(flow, fullText: nil)
    }

    /// Evaluates the expression against one flow, asking `fullText` (when given) whether the
    /// flow satisfies each full-text search on a side, instead of reading its text in Swift: the
    /// capture store answers from its index, so a flow read without its bodies still matches.
    public func matches(_ flow: Flow, fullText: ((FullTextQuery, FilterMessageSide) -> Bool)?) -> Bool {
        switch self {
        case .and(let left, let right): return left.matches(flow, fullText: fullText) && right.matches(flow, fullText: fullText)
        case .or(let left, let right): return left.matches(flow, fullText: fullText) || right.matches(flow, fullText: fullText)
        case .not(let operand): return !operand.matches(flow, fullText: fullText)
        case .fullText(let query, let side):
            if let fullText { return fullText(query, side) }
            return query.matches(FullTextDocument.Words(FullTextDocument(flow, readingSpools: false)),
                                 in: FullTextField.side(side))
        case .domain(let regex): return regex.matches(flow.host)
        case .url(let regex): return regex.matches(flow.url)
        case .method(let regex): return regex.matches(flow.method)
        case .statusCode(let code): return flow.status == code
        case .contentType(let regex, let side):
            return side.messages(of: flow).contains { message in
                message.headers.first(named: "Content-Type").map(regex.matches) ?? false
            }
        case .header(let regex, let side):
            return side.messages(of: flow).contains { message in
                message.headers.contains { regex.matches("\($0.name): \($0.value)") }
            }
        case .body(let regex, let side):
            // A body on its way to disk (a live flow's, `BodySpool`) is not read: that would wait
            // for the disk, on an event loop when a breakpoint asks.
            let inBodies = side.messages(of: flow).contains { message in
                guard message.body.spool == nil, !message.body.bytes.isEmpty else { return false }
                let decoded = BodyDecoder.decode(
                    [UInt8](message.body.bytes), contentEncoding: message.headers.first(named: "Content-Encoding"))
                return regex.matches(String(decoding: decoded.bytes, as: UTF8.self))
            }
            // A WebSocket's messages are its bodies: sent ones the request's, received the response's
            // (present when the reader loaded them: `TrafficRepository` does for filters on bodies).
            return inBodies || (flow.webSocketMessages ?? []).contains { message in
                side.covers(message.direction) && !message.payload.isEmpty
                    && regex.matches(String(decoding: message.payload, as: UTF8.self))
            }
        case .rule(let regex): return flow.appliedRules.contains(where: regex.matches)
        case .proxy(let regex): return flow.proxyName.map(regex.matches) ?? false
        case .requestWithoutResponse: return flow.kind == .http && flow.status == nil
        case .hasResponse: return flow.status != nil
        case .hasError: return flow.error != nil
        case .marked: return flow.marked
        case .replay: return flow.replayOf != nil
        case .websocket: return Self.asksForWebSocket(flow.requestHeaders)
        case .http: return flow.kind == .http
        case .http2: return flow.kind == .http && flow.httpVersion == FilterExpression.http2Version
        case .tunnel: return flow.kind == .tunnel
        case .all: return true
        }
    }

    /// True when some `Upgrade` header lists the `websocket` protocol (any case).
    private static func asksForWebSocket(_ headers: [HeaderField]) -> Bool {
        headers.contains { field in
            field.name.equalsIgnoringASCIICase("Upgrade")
                && field.value.split(separator: ",").contains {
                    $0.trimmingCharacters(in: .whitespaces).caseInsensitiveCompare("websocket") == .orderedSame
                }
        }
    }
}

/// The headers and body of one message of a flow.
private struct FilterMessage {
    var headers: [HeaderField]
    var body: CapturedBody
}

extension FilterMessageSide {
    /// Whether WebSocket messages sent that way count as this side's bodies.
    fileprivate func covers(_ direction: CapturedMessage.Direction) -> Bool {
        switch self {
        case .either: return true
        case .request: return direction == .sent
        case .response: return direction == .received
        }
    }

    /// The messages of `flow` this side covers (a flow without a response has empty response
    /// headers and body, so response predicates never match it).
    fileprivate func messages(of flow: Flow) -> [FilterMessage] {
        let request = FilterMessage(headers: flow.requestHeaders, body: flow.requestBody)
        let response = FilterMessage(headers: flow.responseHeaders, body: flow.responseBody)
        switch self {
        case .either: return [request, response]
        case .request: return [request]
        case .response: return [response]
        }
    }
}
