import ProxyModel

/// A failure at run time that names the problem and the fix, printed as `Error: …` without the
/// usage text (which argument-parser adds to `ValidationError`, meant for bad flags).
struct CLIError: Error, CustomStringConvertible {
    var description: String

    /// Messages quote hosts, URLs, paths and file contents: whatever they hold is shown escaped
    /// (`TerminalText`), line breaks of multi-line messages kept.
    init(_ description: String) {
        self.description = TerminalText.escaped(description, keepingLineBreaks: true)
    }
}
