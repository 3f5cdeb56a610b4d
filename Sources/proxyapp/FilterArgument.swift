import FlowFilter

/// Parses a `--filter` expression for any command that takes one (`flows`, `export`), turning
/// a syntax error into a `CLIError` that shows the expression with a caret under the problem.
enum FilterArgument {
    static func parse(_ text: String, option: String = "--filter") throws -> FlowFilter {
        do {
            return try FlowFilter(parsing: text)
        } catch {
            let diagram = error.caretDiagram.split(separator: "\n", omittingEmptySubsequences: false)
                .map { "  " + $0 }.joined(separator: "\n")
            throw CLIError("""
                bad \(option) expression: \(error.description)
                \(diagram)
                The operators (~d, ~u, ~m, ~c, ~h, ~b, …), quoting and precedence are listed under "Filter expressions" in README.md.
                """)
        }
    }
}
