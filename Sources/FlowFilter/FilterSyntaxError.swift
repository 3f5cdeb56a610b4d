/// Why a filter expression could not be parsed, and where.
///
/// Every caller shows it to a person (the CLI, later the TUI's filter prompt), so it carries the
/// text and can draw a caret under the offending position.
public struct FilterSyntaxError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong, e.g. "unknown operator ~x", "expected ')'", "bad regex \"(\"".
    public let message: String
    /// 0-based `Character` offset into `text` (equal to the length when the text ended too soon).
    public let position: Int
    /// The whole expression as given.
    public let text: String

    public init(message: String, position: Int, text: String) {
        self.message = message
        self.position = position
        self.text = text
    }

    /// 1-based column of the problem, the convention of every message about it (CLI and TUI),
    /// as editors count.
    public var column: Int { position + 1 }

    /// One line: `<message> at column N`.
    public var description: String {
        "\(message) at column \(column)"
    }

    /// Two lines: the text, then a `^` under the offending character.
    public var caretDiagram: String {
        text + "\n" + String(repeating: " ", count: position) + "^"
    }
}
