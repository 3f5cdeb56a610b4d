import ArgumentParser
import CaptureStore
import Foundation

/// `proxyapp flows`: the latest captured flows as a table, read-only, safe while a proxy writes.
struct FlowsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flows", abstract: "Print the latest captured flows (newest last).")

    @OptionGroup var data: DataDirectoryOptions

    @Option(name: .shortAndLong, help: "How many flows to print.")
    var limit: Int = 50

    @Flag(help: "Print only the number of stored flows.")
    var count = false

    func validate() throws {
        guard limit > 0 else { throw ValidationError("--limit must be at least 1.") }
    }

    func run() throws {
        let repository = try data.openExistingCapture()
        if count {
            print(try repository.count())
            return
        }
        print(FlowTable.header)
        for flow in try repository.latestFlows(limit: limit).reversed() {
            print(FlowTable.line(for: flow))
        }
    }
}
