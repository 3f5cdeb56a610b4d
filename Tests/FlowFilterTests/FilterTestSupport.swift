import FlowFilter

/// The error `text` is refused with, or nil when it parses.
func syntaxError(_ text: String) -> FilterSyntaxError? {
    do {
        _ = try FlowFilter(parsing: text)
        return nil
    } catch {
        return error
    }
}
