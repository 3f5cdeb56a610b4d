import CaptureStore
import ControlChannel
import Foundation
import ProxyEngine
import ProxyModel
import TerminalUI

/// Replays captured flows and sends composed requests through one engine: what `proxyapp replay`
/// runs standalone, what the control channel's `replay`/`send` run inside a proxy, and what the
/// TUI's `r` runs.
///
/// It reads the originals from the capture and refuses what cannot be sent faithfully, each
/// with a reason: an unknown id, a tunnel (opaque bytes), a WebSocket (its messages are not a
/// request), a request body cut at capture (unless `allowTruncated`). The engine (`FlowReplayer`)
/// does the rest; replies are lines in words.
struct FlowReplayService: Sendable {
    let repository: any FlowStore
    /// The engine's replayer, with or without rules.
    let replayer: @Sendable (_ ignoresRules: Bool) -> FlowReplayer

    /// The most sends one command may ask for (ids × count).
    static let maximumRequests = 100_000

    struct Options: Sendable {
        var count = 1
        var concurrency = 1
        var ignoresRules = false
        var allowTruncated = false
    }

    /// Why `ids` flows sent `count` times each are too many (counted without overflowing); nil
    /// when they are not.
    static func sizeRefusal(ids: Int, count: Int) -> String? {
        let (total, overflow) = ids.multipliedReportingOverflow(by: count)
        guard overflow || total > maximumRequests else { return nil }
        return "\(ids) flows × --count \(count) is more than \(maximumRequests) replays per command"
    }

    /// - Parameter isCancelled: asked before each send; true stops the replay (its client left).
    func replay(ids: [Int64], options: Options, isCancelled: @escaping @Sendable () -> Bool = { false }) async -> ControlReply {
        guard !ids.isEmpty else { return .failure("no flow to replay: name at least one flow id") }
        guard options.count >= 1, options.concurrency >= 1 else {
            return .failure("--count and --concurrency must be at least 1")
        }
        if let refusal = Self.sizeRefusal(ids: ids.count, count: options.count) { return .failure(refusal) }
        var originals: [Flow] = []
        for id in ids {
            let flow: Flow?
            do {
                flow = try repository.flow(id: id)
            } catch {
                return .failure("cannot read flow #\(id) from the capture: \(CaptureErrorText.describe(error))")
            }
            guard let flow else {
                return .failure("no flow #\(id) in the capture (`proxyapp flows` lists them)")
            }
            if let refusal = Self.refusal(flow, allowTruncated: options.allowTruncated) { return .failure(refusal) }
            originals.append(flow)
        }
        // One request per flow, sent `count` times over: the bodies are not copied per send.
        let requests = originals.map(ReplayRequest.init(flow:))
        let outcomes = await replayer(options.ignoresRules).run(requests, repeating: options.count,
                                                                concurrency: options.concurrency, isCancelled: isCancelled)
        var lines: [String] = []
        if outcomes.count <= 50 {
            for (index, outcome) in outcomes.enumerated() {
                lines.append(Self.line(requests[index % requests.count], outcome))
            }
        }
        let answered = outcomes.filter { $0.status != nil }.count
        var summary = "replayed \(outcomes.count) request\(outcomes.count == 1 ? "" : "s"): \(answered) answered"
        if answered < outcomes.count {
            summary += ", \(outcomes.count - answered) failed"
            if outcomes.count > 50, let first = outcomes.first(where: { $0.failure != nil })?.failure {
                summary += " (first: \(first))"
            }
        }
        lines.append(summary)
        return ControlReply(ok: true, lines: lines)
    }

    /// Why `flow` cannot be replayed as captured; nil when it can.
    static func refusal(_ flow: Flow, allowTruncated: Bool) -> String? {
        let id = flow.id.map { "#\($0)" } ?? "this flow"
        if flow.kind == .tunnel || flow.method.uppercased() == "CONNECT" {
            return "flow \(id) is a tunnel of opaque bytes: there is no HTTP request to replay"
        }
        if flow.status == 101 || flow.messageCount > 0 {
            return "flow \(id) is a WebSocket: its messages cannot be replayed, only its upgrade request "
                + "(`proxyapp export --curl \(flow.id ?? 0)` prints that)"
        }
        if flow.requestBody.truncated && !allowTruncated {
            return "flow \(id)'s request body was cut at capture (\(flow.requestBody.bytes.count) of \(flow.requestBody.size) "
                + "bytes kept): replaying it would send another request. Pass --allow-truncated to send what was kept, "
                + "or raise --max-body-size"
        }
        return nil
    }

    /// `#12 ↻ GET https://example.com/ → 200 OK  1.2 KiB  34 ms`.
    static func line(_ request: ReplayRequest, _ outcome: ReplayOutcome) -> String {
        var text = (request.replayOf.map { "#\($0) ↻ " } ?? "") + "\(request.method) \(request.url) → "
        if let status = outcome.status {
            text += "\(status)\(outcome.reason.isEmpty ? "" : " " + outcome.reason)  \(FlowRow.humanSize(Int64(outcome.bodySize)))"
        } else {
            text += "failed: \(outcome.failure ?? "no answer")"
        }
        text += "  \(FlowRow.humanDuration(outcome.milliseconds))"
        return TerminalText.escaped(text)
    }

    /// Runs `operation` from a thread that is not part of Swift's concurrency pool (the control
    /// channel's, the TUI worker's) and waits for it.
    static func blocking<T: Sendable>(_ operation: @escaping @Sendable () async -> T) -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        Task {
            box.value = await operation()
            done.signal()
        }
        done.wait()
        return box.value!
    }
}

/// Carries a value out of a task to the thread waiting for it (the semaphore orders the accesses).
private final class ResultBox<T>: @unchecked Sendable {
    var value: T?
}
