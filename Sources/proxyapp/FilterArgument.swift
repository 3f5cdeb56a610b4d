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
            let diagram = error.caretDiagram.split(separator: "\n", omittingEmptySubsequences: false)
                .map { "  " + $0 }.joined(separator: "\n")
            // The expression is shown escaped: a pasted one may hold control characters.
            throw ValidationError(TerminalText.escaped("""
                bad \(option) expression: \(error.description)
                \(diagram)
                The operators (~d, ~u, ~m, ~c, ~h, ~b, …), quoting and precedence are listed under "Filter expressions" in README.md.
                """, keepingLineBreaks: true))
        }
    }
}
