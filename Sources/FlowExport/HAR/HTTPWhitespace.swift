extension StringProtocol {
    /// Without leading and trailing spaces and tabs, the whitespace of HTTP header syntax
    /// (cheaper than Foundation's Unicode-aware trimming on the export's hot path).
    func trimmingHTTPWhitespace() -> String {
        var slice = self[...]
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}
