import Foundation
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a client program (curl, openssl) for a test, to completion, with a clean environment
/// and a hard time limit. Shared by the test targets that drive real clients.
///
/// The environment holds only `PATH` and a private `HOME`, so neither the machine's proxy
/// variables nor its CA-bundle variables (`SSL_CERT_FILE`, `CURL_CA_BUNDLE`, …) decide what the
/// client does or trusts. A run that outlives `timeout` is killed and reported as `killed`.
public enum ChildProcess {
    public struct Outcome: Sendable {
        public var exitCode: Int32
        public var stdout: Data
        /// Standard error; also standard output when the run merged them.
        public var stderr: Data
        public var killed: Bool
    }

    /// - Parameter mergeOutput: send standard output to `stderr` too (one interleaved log).
    public static func run(_ executable: String, _ arguments: [String], timeout: TimeInterval,
                           mergeOutput: Bool = false) async throws -> Outcome {
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("proxyapp-child-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let stdoutURL = scratch.appendingPathComponent("stdout")
        let stderrURL = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        let stdoutHandle = try FileHandle(forWritingTo: stdoutURL)
        let stderrHandle = try FileHandle(forWritingTo: stderrURL)
        defer {
            try? stdoutHandle.close()
            try? stderrHandle.close()
        }

        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ["PATH": "/usr/bin:/bin", "HOME": scratch.path]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = mergeOutput ? stderrHandle : stdoutHandle
        process.standardError = stderrHandle

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
                // The lock keeps the pid from being reused between the check and the kill.
                exited.withLockedValue { exited in
                    if !exited {
                        killed.withLockedValue { $0 = true }
                        kill(pid, SIGKILL)
                    }
                }
            }
        }
        return Outcome(exitCode: status, stdout: (try? Data(contentsOf: stdoutURL)) ?? Data(),
                       stderr: (try? Data(contentsOf: stderrURL)) ?? Data(), killed: killed.withLockedValue { $0 })
    }
}
