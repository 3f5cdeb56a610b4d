import ArgumentParser
import CaptureStore
import FlowExport
import Foundation
import ProxyModel

/// `proxyapp import --har FILE`: loads a HAR written by a browser, another proxy or ProxyApp
/// into the capture store, so its flows can be listed, filtered, browsed and exported again.
///
/// The file is read as a stream (`HARReader`): each entry is mapped and queued for the store as
/// it is read, so memory stays near a few times `--max-body-size` whatever the file's size.
/// All or nothing: when the file turns out bad (or storing fails) part-way, the flows already
/// stored are deleted again (`FlowImport`).
///
/// `proxyapp import --curl 'curl …'` turns a curl command line (a browser's "Copy as cURL") into a
/// request, sends it through the proxy (`ComposedSend`) and prints the response; its exchange is
/// captured like any other.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Load a HAR file into the capture store, or send a curl command line through the proxy.")

    @OptionGroup var data: DataDirectoryOptions

    @Option(name: .customLong("har"), help: ArgumentHelp("The HAR file to import ('-' for stdin).", valueName: "FILE"))
    var harPath: String?

    @Option(name: .customLong("curl"), help: ArgumentHelp(
        "A curl command line to send through the proxy and capture ('-' for stdin), as a browser's Copy as cURL writes it.",
        valueName: "COMMAND"))
    var curlCommand: String?

    @Flag(help: "With --curl: forward the request as it is, no rule applies.")
    var noRules = false

    @Option(help: "Body bytes stored per request or response (as `run`); longer bodies keep their start and are marked truncated.")
    var maxBodySize: ByteCount = RunCommand.defaultMaxBodySize

    func validate() throws {
        try RunCommand.validateMaxBodySize(maxBodySize)
        guard (harPath == nil) != (curlCommand == nil) else {
            throw ValidationError("give either --har FILE or --curl 'curl …' (one of them).")
        }
        if curlCommand?.isEmpty == true {
            throw ValidationError("--curl needs a curl command line, or '-' to read it from stdin.")
        }
    }

    func run() throws {
        if let curlCommand {
            // A plain command (the HAR import is synchronous): the send waits here, on the main thread.
            let curl = curlCommand, noRules = noRules, data = data
            try FlowReplayService.blocking { () async -> Result<Void, any Error> in
                do {
                    try await CurlImport.send(curl, noRules: noRules, data: data)
                    return .success(())
                } catch {
                    return .failure(error)
                }
            }.get()
            return
        }
        try importHAR(harPath ?? "-")
    }

    private func importHAR(_ harPath: String) throws {
        let descriptor = try openInput(harPath)
        defer { if descriptor != STDIN_FILENO { close(descriptor) } }
        let data = self.data
        let flowImport = FlowImport {
            if let tightened = try data.preparePrivateDirectory() { StandardError.print(tightened) }
            return TrafficRepository(database: try TrafficDatabase(path: data.databasePath))
        }
        let ids: [Int64]
        do {
            try HARReader(maximumBodySize: maxBodySize.bytes).read(from: FileDescriptorSource(descriptor: descriptor)) {
                try flowImport.add($0)
            }
            ids = try flowImport.finish()
        } catch let error as HARImportError {
            flowImport.rollBack()
            // The reason may quote the file's strings (a URL with a newline or ESC): escaped whole.
            throw CLIError("\(harPath) is not a HAR file ProxyApp can read: \(TerminalText.escaped(error.description)). Nothing was imported.")
        } catch let error as CLIError {
            // The data directory refused (another user's files, a shared folder): said as it is.
            flowImport.rollBack()
            throw error
        } catch let error as HARReadError {
            flowImport.rollBack()
            throw CLIError("cannot read \(harPath): \(error). Nothing was imported.")
        } catch {
            flowImport.rollBack()
            let reason = CaptureErrorText.describe(error)
            throw CLIError("could not store the flows of \(harPath) in \(data.databasePath): \(reason). Nothing was imported.")
        }
        if let first = ids.first, let last = ids.last {
            print("imported \(ids.count) flows from \(harPath) as #\(first)–#\(last) into \(data.databasePath)")
        } else {
            print("\(harPath) holds no entries: nothing to import")
        }
    }

    /// The file, opened for reading: `-` is stdin; pipes work (`--har <(gunzip -c x.har.gz)`,
    /// `/dev/stdin`); a directory or a missing file is an error naming the fix.
    private func openInput(_ harPath: String) throws -> Int32 {
        if harPath == "-" { return STDIN_FILENO }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: harPath, isDirectory: &isDirectory) else {
            throw CLIError("no file at \(harPath). Give the path of a .har file (or '-' to read stdin).")
        }
        guard !isDirectory.boolValue else {
            throw CLIError("\(harPath) is a directory. Give the path of a .har file (or '-' to read stdin).")
        }
        let descriptor = open(harPath, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CLIError("cannot read \(harPath): \(String(cString: strerror(errno))). Check its permissions.")
        }
        return descriptor
    }
}
