/// The `E` screen's text: the tail of the proxy's log file, newest last, or why there is none.
public enum EventLogPage {
    /// What the app could read of the log file.
    public enum Content: Sendable, Hashable {
        /// Not read yet (the first read is on its way).
        case loading
        /// No file at the path yet.
        case missing
        /// The file could not be read, in words.
        case failed(String)
        /// The last lines; `truncated` when older lines were left out.
        case lines([String], truncated: Bool)
    }

    public static func title(path: String) -> String {
        "ProxyApp  event log  \(path)"
    }

    public static let hint = "j/k scroll  G end  any other key closes"

    /// - Parameter proxyElsewhere: the proxy runs in another process (`proxyapp tui`): a headless
    ///   proxy's own lines are on its output, not in this file, and the page says so first.
    public static func lines(_ content: Content, path: String, proxyElsewhere: Bool = false) -> [String] {
        let lines = fileLines(content, path: path)
        return proxyElsewhere ? ["(a proxy started with --headless prints its log lines on its own output, not here)"] + lines : lines
    }

    private static func fileLines(_ content: Content, path: String) -> [String] {
        guard !path.isEmpty else { return ["This view was started without a log file."] }
        switch content {
        case .loading: return ["reading \(path)…"]
        case .missing:
            return ["No log lines yet: \(path) does not exist.",
                    "A proxy started with `proxyapp run` writes its log lines there while its terminal UI runs;",
                    "a headless proxy prints them on its own output."]
        case .failed(let reason): return ["Cannot read \(path): \(reason)"]
        case .lines(let lines, let truncated):
            if lines.isEmpty { return ["The log is empty: nothing went wrong so far."] }
            return truncated ? ["(older lines left out: open the file to see them all)"] + lines : lines
        }
    }
}
