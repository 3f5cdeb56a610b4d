import ChildProcess
import Foundation

/// Runs a TLS client program (curl, openssl) to completion with a clean environment and a hard
/// time limit.
///
/// The environment holds only `PATH` and a private `HOME`: the machine's CA-bundle variables
/// (`SSL_CERT_FILE`, `SSL_CERT_DIR`, `CURL_CA_BUNDLE`) must not decide what the client trusts.
enum ExternalClient {
    struct Outcome {
        var exitCode: Int32
        var output: String
        var killed: Bool
    }

    static func run(_ executable: String, _ arguments: [String], timeout: TimeInterval = 20) async throws -> Outcome {
        let outcome = try await ChildProcess.run(executable, arguments, timeout: timeout, mergeOutput: true)
        return Outcome(exitCode: outcome.exitCode, output: String(decoding: outcome.stderr, as: UTF8.self),
                       killed: outcome.killed)
    }
}
