import ArgumentParser
import Foundation
import Rules
import RulesFile

/// `--rules FILE`, shared by `run` and `rules`: the rules file, by default `<data-dir>/rules.yml`.
struct RulesOptions: ParsableArguments {
    @Option(name: .customLong("rules"),
            help: ArgumentHelp("The rules file (default: <data-dir>/rules.yml); edits take effect while the proxy runs.",
                               valueName: "FILE"))
    var file: String?

    /// The rules file's path: `--rules`, else `rules.yml` in the data directory.
    func path(data: DataDirectoryOptions) -> String {
        if let file { return (file as NSString).expandingTildeInPath }
        return data.directory.appendingPathComponent("rules.yml").path
    }

    /// What `run` starts with: the rules in the file (none when the default file does not
    /// exist), the bytes they came from, and a line for the banner. A missing `--rules` file or
    /// a file that does not parse is an error naming the fix.
    func loadForRun(data: DataDirectoryOptions) throws -> (rules: RuleSet, text: Data?, banner: String) {
        let path = path(data: data)
        guard FileManager.default.fileExists(atPath: path) else {
            if file != nil {
                throw CLIError("no rules file at \(path). Create it (README: Rules), or drop --rules.")
            }
            return (.empty, nil, RulesStateText.line(enabled: 0, source: nil, lastError: nil, path: path) + "\n")
        }
        do {
            let text = try RulesFile.read(path: path)
            let rules = try RulesFile.parse(data: text, file: path)
            return (rules, text, RulesStateText.line(enabled: rules.enabledCount, source: path, lastError: nil, path: path) + "\n")
        } catch {
            throw CLIError("the rules file cannot be used:\n\(error.description)\nFix it (`proxyapp rules check` shows the problems), or move it away to start without rules.")
        }
    }
}
