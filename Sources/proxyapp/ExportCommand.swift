import ArgumentParser
import CaptureExport
import CaptureStore
import FlowExport
import Foundation
import ProxyModel

/// `proxyapp export`: captured flows out of the store, as a HAR file (many flows, streamed) or
/// as one flow's curl command or raw HTTP exchange.
struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Export captured flows as HAR 1.2, or one flow as a curl command or raw HTTP.",
        discussion: """
            proxyapp export --har capture.har --filter '~d example.com & ~c 200'
            proxyapp export --har - --marked --redact > shared.har
            proxyapp export --curl 42
            proxyapp export --raw 42
            proxyapp export --store postgres://qa@db/proxyapp --har lab.har --filter '~proxy lab-1'

            To a terminal, --raw and --curl show control characters escaped (\\x1b); --raw
            refuses binary bodies there: redirect or pipe it to get the bytes as they are.
            """)

    @OptionGroup var data: DataDirectoryOptions
    @OptionGroup var store: StoreOptions

    @Option(name: .customLong("har"), help: ArgumentHelp("Write the matching flows as HAR 1.2 to FILE ('-' for stdout).", valueName: "FILE"))
    var harPath: String?

    @Option(name: .customLong("curl"), help: ArgumentHelp("Print a curl command that repeats flow ID's request.", valueName: "ID"))
    var curlID: Int64?

    @Option(name: .customLong("raw"), help: ArgumentHelp("Print flow ID's request and response as on the wire.", valueName: "ID"))
    var rawID: Int64?

    @Option(help: ArgumentHelp("Only flows matching this filter expression (see README: Filter expressions).", valueName: "EXPR"))
    var filter: String?

    @Option(help: ArgumentHelp("Only flows started at or after TIME: \(SinceArgument.formatHelp).", valueName: "TIME"))
    var since: SinceArgument?

    @Flag(help: "Only marked flows.")
    var marked = false

    @Flag(help: "Replace credentials, cookies and secret-looking header, query and form values with REDACTED.")
    var redact = false

    @Flag(help: ArgumentHelp("With --curl or --raw: the request as forwarded to the origin and the response as the origin sent it, where a rule changed them (without it: as the client sent and got them)."))
    var forwarded = false

    func validate() throws {
        let chosen = [harPath != nil, curlID != nil, rawID != nil].filter { $0 }.count
        guard chosen == 1 else {
            throw ValidationError("Choose exactly one of --har FILE, --curl ID or --raw ID.")
        }
        if harPath == nil, filter != nil || since != nil || marked {
            throw ValidationError("--filter, --since and --marked select flows for --har; --curl and --raw take one flow ID.")
        }
        if forwarded && harPath != nil {
            throw ValidationError("--forwarded applies to --curl and --raw; a HAR file holds both views (the forwarded one under _forwarded).")
        }
        if harPath?.isEmpty == true {
            throw ValidationError("--har needs a file name, or '-' for stdout.")
        }
        _ = try filter.map { try FilterArgument.parse($0) }
    }

    func run() throws {
        let query = FlowQuery(filter: try filter.map { try FilterArgument.parse($0) }, since: since?.date, markedOnly: marked)
        let (repository, captureName) = try store.openFlowStore(data: data)
        if let harPath {
            try exportHAR(query, from: repository, to: harPath)
        } else if let curlID {
            let flow = try chosenSide(of: storedFlow(curlID, in: repository, named: captureName))
            guard CurlCommand.isReproducible(flow) else {
                throw CLIError("flow #\(curlID) is a CONNECT tunnel: there is no HTTP request to repeat with curl. Use --raw \(curlID) to see it.")
            }
            print(CurlCommand.render(redact ? FlowRedactor.redact(flow) : flow))
        } else if let rawID {
            let flow = try chosenSide(of: storedFlow(rawID, in: repository, named: captureName))
            let bytes = try Self.rawOutput(RawExchange.render(redact ? FlowRedactor.redact(flow) : flow), id: rawID,
                                           stdoutIsTerminal: isatty(STDOUT_FILENO) == 1)
            let output = FileOutput.standardOutput()
            try bytes.withUnsafeBytes { try output.write($0) }
            try output.flush()
        }
    }

    /// What `--raw` writes. To a pipe or a file: the bytes as on the wire. To a terminal, whose
    /// escape sequences captured bytes must never reach: text with its control and bidi
    /// characters shown escaped (`TerminalText`, line breaks kept); bytes that are not UTF-8
    /// (a compressed or binary body) are refused, as `ca export --format der` refuses a terminal.
    static func rawOutput(_ bytes: [UInt8], id: Int64, stdoutIsTerminal: Bool) throws -> [UInt8] {
        guard stdoutIsTerminal else { return bytes }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw CLIError("flow #\(id) holds binary bytes (a compressed or binary body) and stdout is a terminal: "
                + "redirect stdout (--raw \(id) > flow-\(id).http) or pipe it (--raw \(id) | less).")
        }
        return Array(TerminalText.escaped(text, keepingLineBreaks: true).utf8)
    }

    private func storedFlow(_ id: Int64, in repository: any FlowStore, named captureName: String) throws -> Flow {
        guard let flow = try repository.flow(id: id) else {
            let flows = repository.isShared ? "`proxyapp flows --store …`" : "`proxyapp flows`"
            throw CLIError("no flow #\(id) in \(captureName). \(flows) lists the stored flows and their ids.")
        }
        return flow
    }

    /// The client's view, or with `--forwarded` the origin's (saying so when no rule changed the flow).
    private func chosenSide(of flow: Flow) -> Flow {
        guard forwarded else { return flow }
        if !flow.hasOriginSide {
            FileHandle.standardError.write(Data("flow #\(flow.id ?? 0): no rule changed this request or its response; showing it as the client sent it\n".utf8))
        }
        return flow.originSide
    }

    private func exportHAR(_ query: FlowQuery, from repository: any FlowStore, to path: String) throws {
        let export = HARFileExport(query: query, redact: redact, creatorVersion: ProxyAppCommand.version)
        do {
            let count = try export.write(from: repository, to: path)
            FileHandle.standardError.write(Data("exported \(count) flows to \(ExportDestination(path: path).name)\n".utf8))
        } catch {
            throw CLIError(error.description)
        }
    }
}
