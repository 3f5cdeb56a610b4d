import ArgumentParser
import CaptureStore
import FlowExport
import Foundation
import ProxyModel

/// `proxyapp import --har FILE`: loads a HAR written by a browser, another proxy or ProxyApp
/// into the capture store, so its flows can be listed, filtered, browsed and exported again.
/// All or nothing: the whole file is read and checked before one transaction inserts it.
struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Load a HAR file (Chrome, Firefox, Charles, mitmproxy, ProxyApp) into the capture store.")

    @OptionGroup var data: DataDirectoryOptions

    @Option(name: .customLong("har"), help: ArgumentHelp("The HAR file to import ('-' for stdin).", valueName: "FILE"))
    var harPath: String

    func run() throws {
        let bytes = try readInput()
        let flows: [Flow]
        do {
            flows = try HARReader.flows(from: bytes)
        } catch {
            // The reason may quote the file's strings (a URL with a newline or ESC): escaped whole.
            throw CLIError("\(harPath) is not a HAR file ProxyApp can read: \(TerminalText.escaped(error.description)). Nothing was imported.")
        }
        if let tightened = try data.preparePrivateDirectory() { StandardError.print(tightened) }
        let repository = TrafficRepository(database: try TrafficDatabase(path: data.databasePath))
        let ids: [Int64]
        do {
            ids = try repository.insertAll(flows)
        } catch {
            throw CLIError("could not store the flows of \(harPath) in \(data.databasePath): \(error). Nothing was imported.")
        }
        if let first = ids.first, let last = ids.last {
            print("imported \(ids.count) flows from \(harPath) as #\(first)–#\(last) into \(data.databasePath)")
        } else {
            print("\(harPath) holds no entries: nothing to import")
        }
    }

    /// The file's bytes. Read through a file handle, not `FileManager.contents(atPath:)`, which
    /// answers nil for pipes (`--har <(gunzip -c x.har.gz)`, `/dev/stdin`).
    private func readInput() throws -> Data {
        if harPath == "-" { return FileHandle.standardInput.readDataToEndOfFile() }
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: harPath, isDirectory: &isDirectory) else {
            throw CLIError("no file at \(harPath). Give the path of a .har file (or '-' to read stdin).")
        }
        guard !isDirectory.boolValue else {
            throw CLIError("\(harPath) is a directory. Give the path of a .har file (or '-' to read stdin).")
        }
        guard let handle = FileHandle(forReadingAtPath: harPath) else {
            throw CLIError("cannot read \(harPath): check its permissions.")
        }
        defer { try? handle.close() }
        do {
            return try handle.readToEnd() ?? Data()
        } catch {
            throw CLIError("cannot read \(harPath): \(error.localizedDescription).")
        }
    }
}
