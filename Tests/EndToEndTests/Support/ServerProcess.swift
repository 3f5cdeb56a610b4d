import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Starts a child server (`proxyapp run`, `openssl s_server`) for a test and waits for the line
/// that tells its port: what every such server needs, in one place. Its output (stdout and
/// stderr) goes to a file the test can read; its environment holds only `PATH` and `HOME`, plus
/// what the test adds.
enum ServerProcess {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Runs `executable` with `arguments` and waits (at most `timeout` seconds) for a line
    /// starting with `portPrefix` and then the port. On failure the process is killed and the
    /// error quotes its output. `launcher` is a command that execs the server in its own process
    /// (`["/usr/bin/prlimit", "--nofile=128:128"]`), so the process is still the server.
    static func start(_ executable: String, _ arguments: [String], launcher: [String] = [], home: URL,
                      environment: [String: String] = [:], outputFile: URL, portPrefix: String,
                      timeout: TimeInterval) async throws -> (process: Process, port: Int) {
        _ = FileManager.default.createFile(atPath: outputFile.path, contents: nil)
        let output = try FileHandle(forWritingTo: outputFile)
        defer { try? output.close() }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: launcher.first ?? executable)
        process.arguments = launcher.dropFirst() + (launcher.isEmpty ? [] : [executable]) + arguments
        process.environment = environment.merging(["PATH": "/usr/bin:/bin", "HOME": home.path]) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = output
        process.standardError = output
        try process.run()

        let deadline = Date().addingTimeInterval(timeout)
        var text = ""
        repeat {
            text = (try? String(contentsOf: outputFile, encoding: .utf8)) ?? ""
            if let line = text.split(separator: "\n").first(where: { $0.hasPrefix(portPrefix) }),
               let port = Int(line.dropFirst(portPrefix.count).prefix { $0.isNumber }) {
                return (process, port)
            }
            if !process.isRunning { break }
            try await Task.sleep(nanoseconds: 50_000_000)
        } while Date() < deadline
        let running = process.isRunning
        if running { kill(process.processIdentifier, SIGKILL) }
        throw Failure(description: "\(URL(fileURLWithPath: executable).lastPathComponent) printed no '\(portPrefix)' line "
            + (running ? "within \(Int(timeout)) s" : "(exit \(process.terminationStatus))") + "; output:\n\(text)")
    }
}
