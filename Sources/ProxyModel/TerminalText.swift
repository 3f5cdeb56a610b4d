/// Captured or imported text made safe to print to a terminal: the one place that decides which
/// characters a terminal must never receive raw, and how they are shown instead.
///
/// Flows carry bytes chosen by anyone: a client, an origin, the author of a HAR file. Printed
/// raw, `ESC ] 52 ; c ; … BEL` writes the user's clipboard, `ESC [ 2 J` clears the screen, a
/// C1 `CSI` (U+009B) does the same on terminals that honour C1, and a right-to-left override
/// (U+202E) makes `exe.txt` read as `txt.exe`. Every CLI line that quotes traffic goes through
/// `escaped`; the TUI shows the same characters as U+FFFD (`ScreenGrid`), curl commands write
/// them as `printf` escapes (`ShellQuoting`) and HAR exports as `\uXXXX` (`JSONEmitter`).
public enum TerminalText {
    /// C0 controls (tab, CR and LF included), DEL, C1 controls, and the bidirectional
    /// embeddings, overrides (U+202A–U+202E) and isolates (U+2066–U+2069).
    @inlinable
    public static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        if value < 0x20 || (0x7F...0x9F).contains(value) { return true }
        return (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value)
    }

    /// `text` with every unsafe character shown visibly: `\x1b` below U+0080 (C0 and DEL), else
    /// `\u{202E}` (C1, bidi). With `keepingLineBreaks`, LF, tab and a CR directly before a LF
    /// stay as they are, for output that is meant to span lines (a raw exchange, a list of
    /// errors); a lone CR, which would move the cursor back over what was printed, is escaped.
    /// Backslashes are not doubled: this is for reading, not a reversible encoding.
    public static func escaped(_ text: String, keepingLineBreaks: Bool = false) -> String {
        let scalars = text.unicodeScalars
        guard scalars.contains(where: isUnsafe) else { return text }
        var result = String.UnicodeScalarView()
        var iterator = scalars.makeIterator()
        var next = iterator.next()
        while let scalar = next {
            next = iterator.next()
            if !isUnsafe(scalar) || keepingLineBreaks && (scalar == "\n" || scalar == "\t" || scalar == "\r" && next == "\n") {
                result.append(scalar)
            } else {
                result.append(contentsOf: escape(scalar).unicodeScalars)
            }
        }
        return String(result)
    }

    /// `\x1b`, `\x7f`, `\u{9B}`, `\u{202E}`.
    private static func escape(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: scalar.value >= 0x80)
        if scalar.value < 0x80 { return "\\x" + (hex.count == 1 ? "0" : "") + hex }
        return "\\u{" + hex + "}"
    }
}
