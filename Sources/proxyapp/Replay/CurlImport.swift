import ArgumentParser
import Foundation
import ProxyModel
import RequestComposer

/// `import --curl`: a curl command line read as curl would (`CurlCommandLine`), files it names
/// with `@file` read from disk, then sent as `proxyapp send` sends.
enum CurlImport {
    /// The most bytes one `@file` of the command may bring in.
    static let maximumFileBytes = 64 << 20

    static func send(_ argument: String, noRules: Bool, data: DataDirectoryOptions) async throws {
        let commandLine = argument == "-" ? try ComposedInput.read("-", what: "curl command line") : argument
        let request: ComposedRequest
        do {
            request = try CurlCommandLine.parse(commandLine, readFile: readFile)
        } catch let error as ComposeError {
            throw CLIError("the curl command cannot be imported: " + TerminalText.escaped(error.description))
        }
        // The engine, when none runs, starts with the data directory's CA, rules file and no upstream proxy.
        var options = try LocalEngineOptions.parse([])
        options.data = data
        try await ComposedSend.send(request, noRules: noRules, headOnly: false, options: options)
    }

    /// `@file` of `--data-binary`/`-d`: the file's bytes, bounded; `@-` is stdin.
    static func readFile(_ path: String) throws -> [UInt8] {
        var isDirectory: ObjCBool = false
        if path != "-", FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), isDirectory.boolValue {
            throw ComposeError(message: "\(path) (named with @) is a directory: name a file")
        }
        let handle = path == "-" ? FileHandle.standardInput : FileHandle(forReadingAtPath: path)
        guard let handle else {
            throw ComposeError(message: "cannot read \(path) (named with @): check that it exists and is readable")
        }
        defer { if path != "-" { try? handle.close() } }
        let bytes = (try? handle.read(upToCount: maximumFileBytes + 1)) ?? Data()
        guard bytes.count <= maximumFileBytes else {
            throw ComposeError(message: "\(path) (named with @) is over \(maximumFileBytes >> 20) MiB")
        }
        return [UInt8](bytes)
    }
}
