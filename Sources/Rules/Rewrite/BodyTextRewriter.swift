import BodyCodec
import LinearRegex

/// Replaces text in a whole message body for a `rewrite` rule: decodes its `Content-Encoding`,
/// applies the replacements in order to the UTF-8 text, and hands back the new bytes
/// unencoded (the caller drops `Content-Encoding` and sets `Content-Length`).
///
/// Only textual bodies are touched (a `Content-Type` that is text, JSON, XML, JavaScript or a
/// form; or no type and UTF-8 bytes); anything else passes as it came, with the reason.
public enum BodyTextRewriter {
    public enum Outcome: Sendable, Equatable {
        /// The new body, without any content encoding.
        case rewritten([UInt8])
        /// No replacement found anything: send the body as it came (still encoded).
        case unchanged
        /// Not rewritten, and why (for the flow's note).
        case skipped(String)
    }

    /// How long the replacements of one body may run. Each regex search is linear, but a pattern
    /// whose preferred branch reads far ahead before a short match wins (`b+c|b` over a long run
    /// of b) makes replacing every match quadratic: 20 s for 100 KB, hours for 16 MiB. Past this
    /// the body passes as it came, with a note, and the thread is free again.
    public static let timeLimit: Duration = .seconds(5)

    /// - Parameters:
    ///   - limit: the largest decoded body rewritten; a body that decodes to more passes as it came.
    ///   - timeLimit: past it (checked between regex matches), the body passes as it came.
    ///   - shouldStop: asked before each step (decoding, each replacement, between regex matches);
    ///     true gives `.skipped("stopped")` at once (the caller no longer wants the result: its
    ///     client left).
    public static func rewrite(_ body: [UInt8], contentType: String?, contentEncoding: String?,
                               replacements: [TextReplacement], limit: Int = BodyDecoder.defaultLimit,
                               timeLimit: Duration = Self.timeLimit, shouldStop: () -> Bool = { false }) -> Outcome {
        let job = Job(body, contentType: contentType, contentEncoding: contentEncoding, replacements: replacements,
                      limit: limit, timeLimit: timeLimit)
        while true {
            if let outcome = job.run(for: timeLimit, shouldStop: shouldStop) { return outcome }
        }
    }

    /// One body's rewrite, run in slices: `run(for:)` works until the slice is used up and says
    /// whether it finished. Between slices the caller gives the thread to other work, so a body
    /// whose pattern makes replacing quadratic (`b+c|b`) holds a pool thread for one slice at a
    /// time, not its whole `timeLimit`: 20 such bodies once made every map-local file and every
    /// other rewrite wait 25 s behind them. `timeLimit` counts the slices' running time only.
    ///
    /// Not thread-safe: one slice at a time (the caller runs the next after the last returned).
    public final class Job: @unchecked Sendable {
        private let body: [UInt8]
        private let contentType: String?
        private let contentEncoding: String?
        private let replacements: [TextReplacement]
        private let limit: Int
        private let timeLimit: Duration
        /// The decoded text, once decoded; the replacement being applied and its progress.
        private var text: [UInt8]?
        private var original: [UInt8]?
        private var index = 0
        private var progress = ReplacementProgress()
        private var spent: Duration = .zero

        public init(_ body: [UInt8], contentType: String?, contentEncoding: String?, replacements: [TextReplacement],
                    limit: Int = BodyDecoder.defaultLimit, timeLimit: Duration = BodyTextRewriter.timeLimit) {
            self.body = body
            self.contentType = contentType
            self.contentEncoding = contentEncoding
            self.replacements = replacements
            self.limit = limit
            self.timeLimit = timeLimit
        }

        /// Works for at most `slice` (checked between regex matches); the outcome once finished,
        /// nil when there is more to do. `shouldStop` as for `rewrite`.
        public func run(for slice: Duration, shouldStop: () -> Bool = { false }) -> Outcome? {
            let clock = ContinuousClock()
            let started = clock.now
            defer { spent += clock.now - started }
            if text == nil {
                if let outcome = decode(shouldStop: shouldStop) { return outcome }
            }
            let sliceEnd = started.advanced(by: slice)
            let deadline = started.advanced(by: timeLimit - spent)
            var stopped = false
            var outOfTime = false
            while index < replacements.count {
                if shouldStop() { return .skipped("stopped") }
                let replacement = replacements[index]
                guard case .regex(let regex) = replacement.pattern, let template = replacement.template else {
                    text = Array(replacement.apply(to: String(decoding: text!, as: UTF8.self)).utf8)
                    index += 1
                    continue
                }
                text!.withUnsafeBufferPointer { bytes in
                    regex.continueReplacing(utf8: bytes, with: template, progress: &progress) {
                        if shouldStop() { stopped = true } else if clock.now >= deadline { outOfTime = true }
                        return !stopped && !outOfTime && clock.now < sliceEnd
                    }
                }
                if stopped { return .skipped("stopped") }
                if outOfTime {
                    return .skipped("a regex replacement ran past \(timeLimit) (its pattern reads far ahead for every match)")
                }
                guard progress.isFinished else { return nil }
                if let replaced = progress.result { text = replaced }
                progress = ReplacementProgress()
                index += 1
            }
            return text == original ? .unchanged : .rewritten(text!)
        }

        /// Decodes the body into `text`; an outcome when it cannot be rewritten.
        private func decode(shouldStop: () -> Bool) -> Outcome? {
            if replacements.isEmpty || body.isEmpty { return .unchanged }
            if let contentType, !MediaType(contentType).isTextual {
                return .skipped("not text (\(MediaType(contentType).essence))")
            }
            if shouldStop() { return .skipped("stopped") }
            let decoded = BodyDecoder.decode(body, contentEncoding: contentEncoding, limit: limit)
            if let reason = decoded.reason {
                return .skipped(reason)  // the body is sent as it came
            }
            guard String(validating: decoded.bytes, as: UTF8.self) != nil else {
                return .skipped("not UTF-8 text")
            }
            text = decoded.bytes
            original = decoded.bytes
            return nil
        }
    }
}
