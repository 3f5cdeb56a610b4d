import ArgumentParser
import CaptureStore
import FlowFilter
import Foundation
import ProxyModel
import SharedCapture

/// `proxyapp search`: finds flows by the words in their URL, headers and textual bodies through
/// the capture's full-text index, newest first, and shows each match in context. Read-only,
/// safe while a proxy writes.
struct SearchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "search", abstract: "Find flows by the words in their URL, headers and bodies (newest first).",
        discussion: """
            Words are matched whole, in any case and without accents (user_id is the phrase "user id"); \
            a word ending in * matches words that start so. Combine with AND, OR, NOT and ( ); put "…" \
            around a phrase; limit a part to url:, headers:, body:, request: or response:. \
            Bodies are searched when they are text, up to their first 64 KiB.
            Examples: proxyapp search user_id 123 | proxyapp search 'body:"invalid token" NOT url:health' \
            | proxyapp search --filter '~c 500' timeout
            On a shared store (--store) there is no word index: flows are searched newest first, \
            one by one, so a rare word on a large capture takes a while.
            """)

    @OptionGroup var data: DataDirectoryOptions
    @OptionGroup var store: StoreOptions

    @Argument(help: ArgumentHelp("What to find (several words: all of them).", valueName: "words"))
    var words: [String] = []

    @Option(help: ArgumentHelp("Only flows that also match this filter expression, e.g. '~d example.com'.",
                               valueName: "EXPR"))
    var filter: String?

    @Option(name: .shortAndLong, help: "How many matches to print, newest first.")
    var limit: Int = 20

    @Flag(help: "Print only how many flows match.")
    var count = false

    func validate() throws {
        guard !words.isEmpty else {
            throw ValidationError("Say what to find, e.g. proxyapp search user_id 123 (see proxyapp search --help).")
        }
        guard limit > 0 else { throw ValidationError("--limit must be at least 1.") }
        _ = try search()
        _ = try filter.map { try FilterArgument.parse($0) }
    }

    func run() throws {
        let colored = isatty(STDOUT_FILENO) == 1 && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
        let lines: [String]
        if let address = try store.address() {
            lines = try output(PostgresFlowReader(session: StoreOptions.openSession(address)), colored: colored)
        } else {
            lines = try output(data.openExistingCapture(), colored: colored)
        }
        for line in lines { print(line) }
    }

    /// The search and the filter as one filter.
    private func searchFilter() throws -> (search: FullTextQuery, filter: FlowFilter) {
        let search = try search()
        let extra = try filter.map { try FilterArgument.parse($0) }
        let expression = extra.map { FilterExpression.and(.fullText(search, .either), $0.expression) }
            ?? .fullText(search, .either)
        return (search, FlowFilter(expression, text: words.joined(separator: " ")))
    }

    /// What `run` prints for the local capture, line by line.
    func output(_ repository: TrafficRepository, colored: Bool) throws -> [String] {
        let (search, filter) = try searchFilter()
        let query = FlowQuery(filter: filter)
        if count { return [String(try repository.count(matching: query))] }
        let hits = try repository.latestFullTextHits(search, matching: query, limit: limit)
        return try lines(hits, colored: colored, shared: false) { try repository.count(matching: query) }
    }

    /// What `run` prints for the shared store, line by line.
    func output(_ reader: PostgresFlowReader, colored: Bool) throws -> [String] {
        let (search, filter) = try searchFilter()
        if count { return [String(try reader.count(matching: filter))] }
        let hits = try reader.latestFullTextHits(search, matching: filter, limit: limit)
        return try lines(hits, colored: colored, shared: true) { try reader.count(matching: filter) }
    }

    /// The hits as a table with their excerpts; `total` counts every match when more than
    /// `limit` may exist.
    private func lines(_ hits: [FullTextHit], colored: Bool, shared: Bool, total: () throws -> Int) throws -> [String] {
        guard !hits.isEmpty else { return ["No flow matches."] }
        var lines = [shared ? FlowTable.sharedHeader : FlowTable.header]
        for hit in hits.reversed() {
            lines.append(shared ? FlowTable.line(for: hit.flow, proxy: hit.flow.proxyName ?? "") : FlowTable.line(for: hit.flow))
            for excerpt in hit.excerpts {
                lines.append("        " + Self.label(excerpt.field) + ": " + Self.shown(excerpt.text, colored: colored))
            }
        }
        if hits.count == limit {
            let total = try total()
            if total > limit { lines.append("(the newest \(limit) of \(total) matches; --limit N shows more)") }
        }
        return lines
    }

    /// The words as one search; a syntax error is a usage error with a caret under the problem.
    private func search() throws -> FullTextQuery {
        let text = words.joined(separator: " ")
        do {
            return try FullTextQuery(parsing: text)
        } catch {
            throw FilterArgument.usageError(error, what: "bad search",
                                            hint: "See proxyapp search --help, or \"Searching captures\" in README.md.")
        }
    }

    static func label(_ field: FullTextField) -> String {
        switch field {
        case .url: return "url"
        case .requestHeaders: return "request headers"
        case .requestBody: return "request body"
        case .responseHeaders: return "response headers"
        case .responseBody: return "response body"
        }
    }

    /// An excerpt on one line, escaped, its matches in bold (or in [brackets] when not a terminal).
    static func shown(_ excerpt: String, colored: Bool) -> String {
        var line = ""
        var pendingSpace = false
        for character in excerpt {
            if character.isWhitespace {
                pendingSpace = !line.isEmpty
                continue
            }
            if pendingSpace {
                line.append(" ")
                pendingSpace = false
            }
            line.append(character)
        }
        return TerminalText.escaped(line)
            .replacingOccurrences(of: String(FullTextHit.matchStart), with: colored ? "\u{1B}[1;4m" : "[")
            .replacingOccurrences(of: String(FullTextHit.matchEnd), with: colored ? "\u{1B}[22;24m" : "]")
    }
}
