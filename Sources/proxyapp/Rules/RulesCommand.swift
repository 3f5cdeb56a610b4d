import ArgumentParser
import Foundation
import ProxyModel
import Rules
import RulesFile

/// `proxyapp rules`: checks a rules file and shows what it does, without starting the proxy.
struct RulesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules",
        abstract: "Check the rules file (block, map_local, map_remote, dns, rewrite, upstream_proxy, throttle, ssl_proxying) and list its rules.",
        discussion: """
            The proxy reads <data-dir>/rules.yml (or --rules FILE) at start and again whenever \
            it changes. README's "Rules" section documents every key.
            """,
        subcommands: [Check.self, List.self],
        defaultSubcommand: List.self
    )
}

extension RulesCommand {
    /// `proxyapp rules check [FILE]`: validates and prints the parsed rules; exit 1 on errors.
    /// No file at the default path is no error: the proxy runs without rules (exit 0).
    struct Check: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate a rules file and print its rules as the proxy reads them (exit status 1 when it has errors).")

        @OptionGroup var data: DataDirectoryOptions
        @OptionGroup var rules: RulesOptions

        @Argument(help: ArgumentHelp("The file to check (default: --rules, else <data-dir>/rules.yml).", valueName: "FILE"))
        var fileArgument: String?

        func run() throws {
            let path = fileArgument.map { ($0 as NSString).expandingTildeInPath } ?? rules.path(data: data)
            guard FileManager.default.fileExists(atPath: path) else {
                print(try Self.noFile(at: path, named: fileArgument != nil ? "FILE" : rules.file != nil ? "--rules" : nil))
                return
            }
            let set: RuleSet
            do {
                set = try RulesFile.load(path: path)
            } catch {
                FileHandle.standardError.write(Data("\(TerminalText.escaped(error.description, keepingLineBreaks: true))\n".utf8))
                throw CLIError("\(error.issues.count) problem\(error.issues.count == 1 ? "" : "s") in \(path); the proxy would not use this file.")
            }
            print(RuleTable.render(set), terminator: "")
            print("\(path): OK, \(set.rules.count) rule\(set.rules.count == 1 ? "" : "s") (\(set.enabledCount) enabled).")
        }

        /// What `check` says when there is no file at `path`. The default file may be absent (the
        /// proxy then runs without rules); a file the user named (`flag`: "FILE" or "--rules") must
        /// exist, as `run --rules` refuses a missing one.
        static func noFile(at path: String, named flag: String?) throws -> String {
            guard let flag else {
                return "No rules file at \(path): the proxy runs without rules. Create it to add rules (README: Rules)."
            }
            throw CLIError(flag == "--rules"
                ? "no rules file at \(path): `proxyapp run --rules \(path)` would refuse to start. Create it (README: Rules), or drop --rules."
                : "no file at \(path) to check.")
        }
    }

    /// `proxyapp rules list` (the default): the rules of the rules file, in the order they apply.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print the rules of the rules file in the order they apply.")

        @OptionGroup var data: DataDirectoryOptions
        @OptionGroup var rules: RulesOptions

        func run() throws {
            let path = rules.path(data: data)
            guard FileManager.default.fileExists(atPath: path) else {
                print("No rules file at \(path): no rules apply. Create it to add rules (README: Rules).")
                return
            }
            do {
                print(RuleTable.render(try RulesFile.load(path: path)), terminator: "")
            } catch {
                FileHandle.standardError.write(Data("\(TerminalText.escaped(error.description, keepingLineBreaks: true))\n".utf8))
                throw CLIError("\(path) has errors; a running proxy keeps the rules it had. `proxyapp rules check` explains.")
            }
        }
    }
}

/// The rules as `rules list` and `rules check` print them: one block per rule, in file order.
/// A rules file may come from anyone (a shared file): its strings are shown escaped.
enum RuleTable {
    static func render(_ set: RuleSet) -> String {
        var text = ""
        if set.rules.isEmpty {
            text += "No rules.\n"
        }
        for (offset, rule) in set.rules.enumerated() {
            text += "\(offset + 1). \(TerminalText.escaped(rule.name))\(rule.enabled ? "" : "  (disabled)")  [line \(rule.line)]\n"
            text += "   match: \(TerminalText.escaped(rule.matchDescription))\n"
            text += "   then:  \(TerminalText.escaped(rule.actionDescription))\n"
        }
        text += "ssl_proxying: \(set.sslProxying.description)\n"
        return text
    }
}
