import ControlChannel
import Foundation
import ProxyEngine
import ProxyModel

/// What the running proxy does with each control-channel command (`ControlRequest`): the
/// channel carries lines, this decides. Runs on the channel's connection thread.
struct ControlCommands: Sendable {
    let service: FlowReplayService
    /// The running proxy's breakpoints; nil for an engine started for one command (nothing is held there).
    var breakpoints: BreakpointControl?

    func handle(_ request: ControlRequest, cancellation: ControlCancellation = ControlCancellation()) -> ControlReply {
        switch request.command {
        case "ping":
            return ControlReply(ok: true, lines: ["pong"])
        case "replay":
            let options = FlowReplayService.Options(
                count: request.count ?? 1, concurrency: request.concurrency ?? 1,
                ignoresRules: request.noRules ?? false, allowTruncated: request.allowTruncated ?? false)
            let ids = request.ids ?? []
            return FlowReplayService.blocking {
                await service.replay(ids: ids, options: options, isCancelled: { cancellation.isCancelled })
            }
        case "send":
            guard let composed = request.request, let body = composed.bodyBytes, !composed.hasMalformedHeaders else {
                return .failure("send needs a request with a method, a URL, headers as [name, value] pairs and a base64 body")
            }
            let replay = ReplayRequest(method: composed.method, url: composed.url,
                                       headers: composed.headerPairs.map { HeaderField(name: $0.0, value: $0.1) },
                                       body: body, replayOf: composed.replayOf)
            let ignoresRules = request.noRules ?? false
            return FlowReplayService.blocking { await service.send(replay, ignoresRules: ignoresRules) }
        case "intercept", "holds", "accept", "kill", "held", "edit":
            guard let breakpoints else { return .failure("no proxy runs on this data directory: breakpoints need one (proxyapp run)") }
            return breakpoints.handle(request)
        default:
            return .failure("unknown control command '\(TerminalText.escaped(String(request.command.prefix(40))))'")
        }
    }
}

extension FlowReplayService {
    /// The most response bytes `send` carries back to print.
    static let sentResponseBodyLimit = 16 << 20

    /// Sends one composed request (`proxyapp send`, `import --curl`); the reply carries the
    /// response for the caller to print.
    func send(_ request: ReplayRequest, ignoresRules: Bool) async -> ControlReply {
        let outcome = await replayer(ignoresRules).send(request, keepingBody: Self.sentResponseBodyLimit)
        guard let status = outcome.status else {
            return .failure("\(request.method) \(request.url): \(outcome.failure ?? "no answer")")
        }
        var reply = ControlReply(ok: true, lines: [Self.line(request, outcome)])
        reply.status = status
        reply.reason = outcome.reason
        reply.responseHeaders = outcome.headers.map { [$0.name, $0.value] }
        reply.responseBody = Data(outcome.body).base64EncodedString()
        if outcome.bodySize > outcome.body.count {
            reply.lines.append("(response body cut at \(Self.sentResponseBodyLimit >> 20) MiB of \(outcome.bodySize) bytes)")
        }
        return reply
    }
}
