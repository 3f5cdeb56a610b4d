import Foundation
import NIOConcurrencyHelpers

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
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("proxyapp-tls-client-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outputURL = scratch.appendingPathComponent("output")
        _ = FileManager.default.createFile(atPath: outputURL.path, contents: nil)
        let outputHandle = try FileHandle(forWritingTo: outputURL)
        defer { try? outputHandle.close() }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ["PATH": "/usr/bin:/bin", "HOME": scratch.path]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = outputHandle
        process.standardError = outputHandle

        let exited = NIOLockedValueBox(false)
        let killed = NIOLockedValueBox(false)
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { process in
                exited.withLockedValue { $0 = true }
                continuation.resume(returning: process.terminationStatus)
            }
            do {
                try process.run()
            } catch {
                continuation.resume(throwing: error)
                return
            }
            let pid = process.processIdentifier
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
                exited.withLockedValue { exited in  // the lock keeps the pid from being reused meanwhile
                    if !exited {
                        killed.withLockedValue { $0 = true }
                        kill(pid, SIGKILL)
                    }
                }
            }
        }
        let output = (try? String(contentsOf: outputURL, encoding: .utf8)) ?? ""
        return Outcome(exitCode: status, output: output, killed: killed.withLockedValue { $0 })
    }
}
