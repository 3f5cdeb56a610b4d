import ChildProcess
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// `openssl s_server -www` as a test origin, for origins NIOSSL cannot play: one that speaks
/// only TLS 1.0 with RSA-key-exchange suites, or one that requires a client certificate. It
/// answers each GET with `HTTP/1.0 200 ok` and an HTML status page.
///
/// Its certificate is self-signed for `localhost` (made with `openssl req` in the test's
/// directory); the proxy trusts it as its `--upstream-ca`. The server listens on 127.0.0.1 on a
/// port of its choice, read from its `ACCEPT 127.0.0.1:PORT` line; its environment holds only
/// `PATH` and `HOME`.
final class OpenSSLServer {
    static let executable = "/usr/bin/openssl"

    let port: Int
    /// The server's certificate (PEM): what a client must trust.
    let certificateFile: URL
    private let process: Process
    private let outputFile: URL

    private init(port: Int, certificateFile: URL, process: Process, outputFile: URL) {
        self.port = port
        self.certificateFile = certificateFile
        self.process = process
        self.outputFile = outputFile
    }

    /// Everything the server printed so far.
    var output: String { (try? String(contentsOf: outputFile, encoding: .utf8)) ?? "" }

    /// Makes a self-signed certificate for `localhost` (RSA 2048 when `rsa`, else P-256) and runs
    /// `openssl s_server -accept 127.0.0.1:0 -www` with `arguments` until `stop()`.
    static func start(in directory: URL, rsa: Bool = false, arguments: [String]) async throws -> OpenSSLServer {
        let name = "s_server-\(UUID().uuidString.prefix(8))"
        let keyFile = directory.appendingPathComponent("\(name)-key.pem")
        let certificateFile = directory.appendingPathComponent("\(name).pem")
        let key = rsa ? ["-newkey", "rsa:2048"] : ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"]
        let made = try await ChildProcess.run(
            executable, ["req", "-x509", "-nodes", "-days", "2", "-subj", "/CN=localhost",
                         "-addext", "subjectAltName=DNS:localhost", "-keyout", keyFile.path, "-out", certificateFile.path] + key,
            timeout: 30)
        guard made.exitCode == 0 else {
            throw ServerProcess.Failure(description: "openssl req failed: \(String(decoding: made.stderr, as: UTF8.self))")
        }

        let outputFile = directory.appendingPathComponent("\(name)-output.txt")
        let (process, port) = try await ServerProcess.start(
            executable, ["s_server", "-accept", "127.0.0.1:0", "-cert", certificateFile.path, "-key", keyFile.path, "-www"]
                + arguments,
            home: directory, outputFile: outputFile, portPrefix: "ACCEPT 127.0.0.1:", timeout: 20)
        return OpenSSLServer(port: port, certificateFile: certificateFile, process: process, outputFile: outputFile)
    }

    /// Ends the server (SIGKILL: it holds no state worth a clean exit) and waits for it.
    func stop() {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    deinit { stop() }
}
