import ProxyModel

/// A parsed filter expression in mitmproxy's language (`~d example\.com & !~c 200`), ready to
/// test flows against.
///
/// The one entry point for `--filter`, the TUI and rules: parse once (regexes are compiled
/// then), match many. Regexes are case-insensitive. The capture store evaluates what it can of
/// `expression` in SQL and calls `matches` for the rest.
public struct FlowFilter: Sendable, CustomStringConvertible {
    /// The expression as the user wrote it.
    public let text: String
    /// The parsed tree.
    public let expression: FilterExpression

    /// Parses `text`.
    /// - Throws: `FilterSyntaxError` naming what is wrong and where (an empty text is an error).
    public init(parsing text: String) throws(FilterSyntaxError) {
        var parser = FilterParser(text)
        self.expression = try parser.parse()
        self.text = text
    }

    /// A filter made of an expression built in code (`proxyapp search` joins its search to a
    /// `--filter`); `text` is what messages show for it.
    public init(_ expression: FilterExpression, text: String) {
        self.expression = expression
        self.text = text
    }

    /// True when `flow` satisfies the expression.
    public func matches(_ flow: Flow) -> Bool {
        expression.matches(flow)
    }

    /// What `matches` will say once the response has come, when the request alone decides it
    /// (`FilterExpression.verdictBeforeResponse`); nil when the response might change it.
    public func verdictBeforeResponse(_ flow: Flow) -> Bool? {
        expression.verdictBeforeResponse(flow)
    }

    public var description: String { text }
}
