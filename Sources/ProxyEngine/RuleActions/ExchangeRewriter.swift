import NIOCore
import NIOHTTP1

import Rules

/// A rewrite rule's work on one exchange: request and response header edits, the status, and
/// body text replacements, which need the whole body, so the exchange holds bodies back (up to
/// `limit`) and hands them here when they end.
///
/// Bodies are edited off the event loop when they are larger than `inlineLimit`, compressed, or
/// any replacement is a regular expression (decoding megabytes, or a regex that backtracks,
/// takes milliseconds or worse); decoded text is bounded by `limit` too.
struct ExchangeRewriter {
    let rule: AppliedRule<RewriteAction>
    /// Larger bodies are sent on unchanged (with a note on the flow).
    let limit: Int
    static let inlineLimit = 64 << 10

    var action: RewriteAction { rule.action }

    /// Whether the request body is held for rewriting.
    var holdsRequestBody: Bool { !action.requestBody.isEmpty }

    /// Whether a response with `head` is held for rewriting (never a body that cannot exist).
    func holdsResponseBody(_ head: HTTPResponseHead, isHeadRequest: Bool) -> Bool {
        guard !action.responseBody.isEmpty, !isHeadRequest else { return false }
        let code = head.status.code
        return code >= 200 && code != 204 && code != 304
    }

    func editRequestHeaders(_ headers: inout HTTPHeaders) {
        action.requestHeaders.apply(to: &headers)
    }

    /// The status (keeping the reason phrase of the new code) and header edits. A 204 or 304
    /// keeps its status: its Content-Length, if any, describes a body that is never sent.
    func editResponseHead(_ head: inout HTTPResponseHead) {
        if let status = action.status, head.status != .noContent, head.status != .notModified {
            head.status = HTTPResponseStatus(statusCode: status)
        }
        action.responseHeaders.apply(to: &head.headers)
    }

    /// What a held body becomes: its bytes to send, headers fitted to them, and a note when it
    /// could not be rewritten.
    struct RewrittenBody: Sendable {
        var body: [UInt8]
        var decoded: Bool
        var note: String?
        /// The bytes differ from the held ones (compared where the rewrite ran, off the loop for
        /// large bodies): the flow keeps both views only then.
        var changed = false
    }

    /// How long one turn of a rewrite holds a pool thread before it queues again behind other
    /// work (map-local reads, other clients' rewrites). Before turns, 20 bodies with a quadratic
    /// pattern held all 4 pool threads for 25 s, map-local files and other rewrites waiting.
    static let slice: Duration = .milliseconds(10)

    /// Rewrites a held body with `replacements`; the future completes on `eventLoop`.
    ///
    /// Off the loop the work runs in turns of `slice` (`BodyTextRewriter.Job`), each queued
    /// again behind whatever waits for the pool: a body whose pattern makes replacing quadratic
    /// keeps its thread for one turn at a time, not for its whole time limit.
    ///
    /// - Parameter cancellation: raised by the exchange when its client goes: a rewrite still
    ///   queued on the pool never starts, and a running one stops before its next step; either
    ///   fails with `WorkCancellation.Cancelled`.
    static func rewrite(_ held: HeldBody, headers: HTTPHeaders, replacements: [TextReplacement], side: String,
                        limit: Int, cancellation: WorkCancellation? = nil, work: any BlockingWork,
                        on eventLoop: any EventLoop) -> EventLoopFuture<RewrittenBody> {
        let bytes = held.bytes
        let job = BodyTextRewriter.Job(bytes, contentType: headers.first(name: "content-type"),
                                       contentEncoding: headers.first(name: "content-encoding"),
                                       replacements: replacements, limit: limit)
        let result: @Sendable (BodyTextRewriter.Outcome) throws -> RewrittenBody = { outcome in
            try cancellation?.check()
            switch outcome {
            case .rewritten(let new): return RewrittenBody(body: new, decoded: true, note: nil, changed: new != bytes)
            case .unchanged: return RewrittenBody(body: bytes, decoded: false, note: nil)
            case .skipped(let reason): return RewrittenBody(body: bytes, decoded: false, note: "rewrite: \(side) body not rewritten: \(reason)")
            }
        }
        let shouldStop: @Sendable () -> Bool = { cancellation?.isCancelled ?? false }
        // Small plain bodies with literal replacements are edited in place. Replacing every
        // match of a regex can cost more than linear time (BodyTextRewriter.timeLimit), and a
        // small compressed body may decode to megabytes: those always leave the event loop.
        let literalOnly = replacements.allSatisfy { if case .literal = $0.pattern { true } else { false } }
        if bytes.count <= inlineLimit && literalOnly && headers.first(name: "content-encoding") == nil {
            return eventLoop.makeCompletedFuture {
                try result(BodyTextRewriter.rewrite(bytes, contentType: headers.first(name: "content-type"), contentEncoding: nil,
                                                    replacements: replacements, limit: limit, shouldStop: shouldStop))
            }
        }
        @Sendable func turn() -> EventLoopFuture<RewrittenBody> {
            let step: @Sendable () throws -> RewrittenBody? = {
                try job.run(for: slice, shouldStop: shouldStop).map(result)
            }
            let ran = cancellation.map { work.run(on: eventLoop, unless: $0, step) } ?? work.run(on: eventLoop, step)
            return ran.flatMap { done in done.map(eventLoop.makeSucceededFuture) ?? turn() }
        }
        return turn()
    }

    /// What a rewrite's future gave: its result, or the held body unchanged when the work could
    /// not run (the pool was shutting down), with a note.
    static func result(of outcome: Result<RewrittenBody, any Error>, held: HeldBody, side: String) -> RewrittenBody {
        switch outcome {
        case .success(let result): return result
        case .failure(let error):
            return RewrittenBody(body: held.bytes, decoded: false, note: "rewrite: \(side) body not rewritten: \(error)")
        }
    }

    /// `headers` framed for `result`: a Content-Length, no Transfer-Encoding, and no
    /// Content-Encoding once the text was decoded.
    static func fit(_ headers: inout HTTPHeaders, to result: RewrittenBody) {
        headers.remove(name: "transfer-encoding")
        if result.decoded {
            headers.remove(name: "content-encoding")
        }
        headers.replaceOrAdd(name: "Content-Length", value: String(result.body.count))
    }
}
