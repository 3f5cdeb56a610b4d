import ChildProcess
import Foundation
import XCTest

extension XCTestCase {
    /// Runs one `proxyapp` command (not `run`) to completion, within 30 s; its exit status and
    /// its standard output and error, interleaved.
    func runProxyApp(_ executable: String, _ arguments: [String]) async throws -> (status: Int32, output: String) {
        let outcome = try await ChildProcess.run(executable, arguments, timeout: 30, mergeOutput: true)
        return (outcome.exitCode, String(decoding: outcome.stderr, as: UTF8.self))
    }
}
