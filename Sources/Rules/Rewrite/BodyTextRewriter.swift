import BodyCodec

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

    /// - Parameter limit: the largest decoded body rewritten; a body that decodes to more
    ///   passes as it came.
    /// - Parameter shouldStop: asked before each step (decoding, each replacement); true gives
    ///   `.skipped("stopped")` at once (the caller no longer wants the result: its client left).
    public static func rewrite(_ body: [UInt8], contentType: String?, contentEncoding: String?,
                               replacements: [TextReplacement], limit: Int = BodyDecoder.defaultLimit,
                               shouldStop: () -> Bool = { false }) -> Outcome {
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
        var result = text
        for replacement in replacements {
            if shouldStop() { return .skipped("stopped") }
            result = replacement.apply(to: result)
        }
        if result == text { return .unchanged }
        return .rewritten(Array(result.utf8))
    }
}
