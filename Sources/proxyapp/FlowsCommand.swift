import ArgumentParser
import CaptureStore
import FlowFilter
import Foundation
import ProxyModel
import SharedCapture

/// `proxyapp flows`: the latest captured flows as a table, read-only, safe while a proxy writes.
struct FlowsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "flows", abstract: "Print the latest captured flows (newest last).")

    @OptionGroup var data: DataDirectoryOptions

    @OptionGroup var store: StoreOptions

    @Option(name: .shortAndLong, help: "How many flows to print.")
    var limit: Int = 50

    @Flag(help: "Print only the number of stored flows (that match --filter, if given).")
    var count = false

    @Option(help: ArgumentHelp("Only flows started at or after TIME: \(SinceArgument.formatHelp).", valueName: "TIME"))
    var since: SinceArgument?

    @Option(help: ArgumentHelp(
        "Only flows matching this filter expression, e.g. '~d example.com & !~c 200' (see README, \"Filter expressions\").",
        valueName: "EXPR"))
    var filter: String?

    func validate() throws {
        guard limit > 0 else { throw ValidationError("--limit must be at least 1.") }
        _ = try filter.map { try FilterArgument.parse($0) }
    }

    func run() throws {
        let flowFilter = try filter.map { try FilterArgument.parse($0) }
        if let address = try store.address() {
            try printShared(PostgresFlowReader(session: StoreOptions.openSession(address)), filter: flowFilter)
            return
        }
        let repository = try data.openExistingCapture()
        guard flowFilter != nil || since != nil else {
            if count {
                print(try repository.count())
                return
            }
            print(FlowTable.header)
            for flow in try repository.latestFlows(limit: limit).reversed() {
                print(FlowTable.line(for: flow))
            }
            return
        }
        let query = FlowQuery(filter: flowFilter, since: since?.date)
        if count {
            print(try repository.count(matching: query))
            return
        }
        print(FlowTable.header)
        for flow in try latestFlows(matching: query, in: repository) {
            print(FlowTable.line(for: flow))
        }
    }

    /// The shared capture: every proxy's flows, newest last, each with its proxy's name.
    func printShared(_ reader: PostgresFlowReader, filter: FlowFilter?) throws {
        do {
            if count {
                print(try reader.count(matching: filter, since: since?.date))
                return
            }
            // The table shows no body: rows are read without them unless the filter reads them.
            let flows = try reader.latestFlows(limit: limit, matching: filter, since: since?.date, bodies: false)
            print(FlowTable.sharedHeader)
            for flow in flows.reversed() {
                print(FlowTable.line(for: flow, proxy: flow.proxyName ?? ""))
            }
        } catch let error as SharedCaptureError {
            throw CLIError("\(error)")
        }
    }

    /// The last `limit` flows matching `query`, oldest first; memory stays at `limit` flows.
    func latestFlows(matching query: FlowQuery, in repository: TrafficRepository) throws -> [Flow] {
        var latest: [Flow] = []
        var next = 0
        try repository.forEachFlow(matching: query) { flow in
            if latest.count < limit {
                latest.append(flow)
            } else {
                latest[next] = flow
                next = (next + 1) % limit
            }
        }
        return Array(latest[next...] + latest[..<next])
    }
}
