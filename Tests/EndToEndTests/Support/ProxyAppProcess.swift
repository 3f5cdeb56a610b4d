import Foundation
import XCTest
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
    /// which goes to `DIR/proxyapp-output.txt`. The environment holds only `PATH` and `HOME`, plus
    /// `environment`. `arguments` follow `run`'s own. `launcher` is a command that execs the proxy
    /// in its own process (`["/usr/bin/prlimit", "--nofile=128:128"]`), so the process is still the proxy.
    static func startHeadless(executable: String, dataDirectory: URL, arguments: [String] = [],
                              environment: [String: String] = [:], launcher: [String] = [],
                              timeout: TimeInterval = 20) async throws -> ProxyAppProcess {
        try FileManager.default.createDirectory(at: dataDirectory, withIntermediateDirectories: true)
        let outputFile = dataDirectory.appendingPathComponent("proxyapp-output.txt")
        let arguments = ["run", "--headless", "--quiet", "--listen", "127.0.0.1:0", "--data-dir", dataDirectory.path] + arguments
        let (process, port) = try await ServerProcess.start(
            executable, arguments, launcher: launcher, home: dataDirectory, environment: environment, outputFile: outputFile,
            portPrefix: "ProxyApp listening on http://127.0.0.1:", timeout: timeout)
        return ProxyAppProcess(port: port, process: process, outputFile: outputFile)
    }

    /// The proxy's process id (for `/proc/PID/…`).
    var processIdentifier: Int32 { process.processIdentifier }

    /// User plus system CPU time the proxy used so far, in clock ticks (`/proc/PID/stat`
    /// fields 14 and 15; 100 a second on Linux).
    var cpuTicks: Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(processIdentifier)/stat", encoding: .utf8),
              let nameEnd = text.lastIndex(of: ")") else { return nil }
        // The fields after the command name start with field 3 (state).
        let fields = text[text.index(after: nameEnd)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        return user + system
    }

    /// How many descriptors the proxy has open (`/proc/PID/fd`).
    var openDescriptors: Int? {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(processIdentifier)/fd"))?.count
    }

    /// Everything the proxy printed so far.
    var output: String { (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "" }

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
        send(SIGTERM)
        return await waitForExit(timeout: timeout) != nil
    }

    /// Sends `signal` to the process, without waiting.
    func send(_ signal: Int32) {
        if process.isRunning { kill(process.processIdentifier, signal) }
    }

    /// Waits up to `timeout` seconds for the process to exit and returns its exit status; nil
    /// when it had to be killed (SIGKILL) because it did not exit.
    func waitForExit(timeout: TimeInterval) async -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline {
            try? await Task.sleep(nanoseconds: 50_000_000)
        }
        guard process.isRunning else { return process.terminationStatus }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        return nil
    }
}

extension XCTestCase {
    /// The built `proxyapp`; fails the test, saying to build it, when there is none.
    func proxyAppExecutable() throws -> String {
        try XCTUnwrap(ProxyAppProcess.builtExecutable,
                      "no proxyapp executable in \(ProxyAppProcess.buildDirectory.path): build it (`swift build --build-tests`)")
    }
}
