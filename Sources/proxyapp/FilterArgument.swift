import ArgumentParser
import FlowFilter
import ProxyModel

/// Parses a `--filter` expression for any command that takes one (`flows`, `export`). A syntax
/// error is a usage error like any bad flag (exit 64, from the command's `validate()`), shown
/// with the expression and a caret under the problem.
enum FilterArgument {
    static func parse(_ text: String, option: String = "--filter") throws -> FlowFilter {
        do {
            return try FlowFilter(parsing: text)
        } catch {
            throw usageError(error, what: "bad \(option) expression",
                             hint: "The operators (~d, ~u, ~m, ~c, ~h, ~b, …), quoting and precedence are listed under "
                                 + "\"Filter expressions\" in README.md.")
        }
    }

    /// `what: <error>`, the text with a caret under the problem, then `hint`, all escaped (a
    /// pasted expression may hold control characters).
    static func usageError(_ error: FilterSyntaxError, what: String, hint: String) -> ValidationError {
        let diagram = error.caretDiagram.split(separator: "\n", omittingEmptySubsequences: false)
            .map { "  " + $0 }.joined(separator: "\n")
        return ValidationError(TerminalText.escaped("\(what): \(error.description)\n\(diagram)\n\(hint)",
                                                    keepingLineBreaks: true))
    }
}
