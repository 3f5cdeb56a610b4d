import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The real `proxyapp` executable, for tests that run the product as a user does: where the
/// build put it, and `proxyapp run --headless` as a child process whose port is read from its
/// banner.
///
/// SwiftPM builds the test bundle into the same directory as the executables (`.build/debug`,
/// really `.build/<triple>/debug`), so the binary is found beside `/proc/self/exe`.
final class ProxyAppProcess {
    /// Why the proxy could not be started.
    typealias Failure = ServerProcess.Failure

    /// The directory this test process runs from (symlinks resolved).
    static var buildDirectory: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
    }

    /// `proxyapp` in `buildDirectory`, or nil when it was not built.
    static var builtExecutable: String? {
        let path = buildDirectory.appendingPathComponent("proxyapp").path
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }

    let port: Int
    private let process: Process
    private let outputFile: URL

    private init(port: Int, process: Process, outputFile: URL) {
        self.port = port
        self.process = process
        self.outputFile = outputFile
    }

    /// Runs `proxyapp run --headless --quiet --listen 127.0.0.1:0 --data-dir DIR` and waits (at
    /// most `timeout` seconds) for `ProxyApp listening on http://127.0.0.1:PORT` on its output,
    /// which goes to `DIR/proxyapp-output.txt`. The environment holds only `PATH` and `HOME`.
    /// `arguments` follow `run`'s own.
    static func startHeadless(executable: String, dataDirectory: URL, arguments: [String] = [],
                              timeout: TimeInterval = 20) async throws -> ProxyAppProcess {
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        let outputFile = dataDirectory.appendingPathComponent("proxyapp-output.txt")
        let arguments = ["run", "--headless", "--quiet", "--listen", "127.0.0.1:0", "--data-dir", dataDirectory.path] + arguments
        let (process, port) = try await ServerProcess.start(
            executable, arguments, home: dataDirectory, outputFile: outputFile,
            portPrefix: "ProxyApp listening on http://127.0.0.1:", timeout: timeout)
        return ProxyAppProcess(port: port, process: process, outputFile: outputFile)
    }

    /// Everything the proxy printed so far.
    var output: String { (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "" }

    var processIdentifier: Int32 { process.processIdentifier }

    /// Ends the proxy with SIGKILL (no clean-up of its own runs) and waits for it.
    func killHard() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Sends SIGTERM and waits up to `timeout` seconds for the exit (then SIGKILL); returns
    /// whether it exited on SIGTERM.
    @discardableResult
    func stop(timeout: TimeInterval = 10) async -> Bool {
        guard process.isRunning else { return true }
        process.terminate()
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline {
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
        guard process.isRunning else { return true }
        kill(process.processIdentifier, SIGKILL)
        return false
    }
}
