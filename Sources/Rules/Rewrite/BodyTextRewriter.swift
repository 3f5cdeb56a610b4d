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
        if replacements.isEmpty || body.isEmpty { return .unchanged }
        if let contentType, !MediaType(contentType).isTextual {
            return .skipped("not text (\(MediaType(contentType).essence))")
        }
        if shouldStop() { return .skipped("stopped") }
        let decoded = BodyDecoder.decode(body, contentEncoding: contentEncoding, limit: limit)
        if let note = decoded.note {
            // The decoder words its note for a viewer ("…: shown as captured"); here the body
            // is simply sent as it came.
            let suffix = ": shown as captured"
            return .skipped(note.hasSuffix(suffix) ? String(note.dropLast(suffix.count)) : note)
        }
        guard let text = String(validating: decoded.bytes, as: UTF8.self) else {
            return .skipped("not UTF-8 text")
        }
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeLimit)
        var result = text
        for replacement in replacements {
            if shouldStop() { return .skipped("stopped") }
            var stopped = false
            do throws(ReplacementStopped) {
                result = try replacement.apply(to: result) {
                    if shouldStop() {
                        stopped = true
                        return false
                    }
                    return clock.now < deadline
                }
            } catch {
                if stopped { return .skipped("stopped") }
                return .skipped("a regex replacement ran past \(timeLimit) (its pattern reads far ahead for every match)")
            }
        }
        if result == text { return .unchanged }
        return .rewritten(Array(result.utf8))
    }
}
