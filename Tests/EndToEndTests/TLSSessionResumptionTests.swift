import ChildProcess
import Foundation
import TestSupport
import XCTest

/// A client that comes back resumes its TLS session with the proxy: intercepted connections to
/// one host share a server context (`ServerContextCache`), so the ticket (TLS 1.3) or session id
/// (TLS 1.2) the proxy gave the first connection is accepted by the next. Each connection is
/// still decrypted and captured as its own flow.
///
/// The client is `openssl s_client` through the proxy's CONNECT (`-proxy`), the session carried
/// between the two runs in a file (`-sess_out`, `-sess_in`); s_client prints `New,` for a full
/// handshake and `Reused,` for a resumed one.
final class TLSSessionResumptionTests: XCTestCase {
    func testTLS13ClientResumesItsSession() async throws {
        try await assertSecondConnectionResumes(versionFlag: "-tls1_3", version: "TLSv1.3")
    }

    func testTLS12ClientResumesItsSession() async throws {
        try await assertSecondConnectionResumes(versionFlag: "-tls1_2", version: "TLSv1.2")
    }

    private func assertSecondConnectionResumes(versionFlag: String, version: String,
                                               file: StaticString = #filePath, line: UInt = #line) async throws {
        let scratch = try makeTemporaryDirectory("resumption")
        let tls = try TLSFixtures(directory: scratch.url)
        let session = scratch.url.appendingPathComponent("session.pem").path
        try await TLSProxySetup.withOrigin(try tls.originContext(for: "localhost")) { origin in
            try await TLSProxySetup.run(tls: tls) { setup in
                func connect(_ sessionArguments: [String]) async throws -> String {
                    // s_client sends the request, then (-ign_eof) reads until the proxy closes
                    // after the answer: the TLS 1.3 ticket arrives on the way.
                    let request = "GET /echo HTTP/1.1\\r\\nHost: localhost:\(origin.port)\\r\\nConnection: close\\r\\n\\r\\n"
                    let command = "printf '\(request)' | openssl s_client -proxy 127.0.0.1:\(setup.proxy.port) "
                        + "-connect localhost:\(origin.port) -servername localhost -CAfile '\(setup.tls.proxyCAFile.path)' "
                        + "-verify_return_error -ign_eof \(versionFlag) " + sessionArguments.joined(separator: " ")
                    let outcome = try await ChildProcess.run("/bin/sh", ["-c", command], timeout: 20, mergeOutput: true)
                    let output = String(decoding: outcome.stderr, as: UTF8.self)
                    XCTAssertEqual(outcome.exitCode, 0, output, file: file, line: line)
                    XCTAssertTrue(output.contains("HTTP/1.1 200"), "no answer through the tunnel:\n\(output)", file: file, line: line)
                    return output
                }
                let first = try await connect(["-sess_out", "'\(session)'"])
                XCTAssertTrue(first.contains("New, \(version)"), first, file: file, line: line)
                XCTAssertTrue(FileManager.default.fileExists(atPath: session), "s_client kept no session", file: file, line: line)
                let second = try await connect(["-sess_in", "'\(session)'"])
                XCTAssertTrue(second.contains("Reused, \(version)"), "the second connection made a full handshake:\n\(second)",
                              file: file, line: line)

                let flows = try await setup.proxy.waitForFlows(count: 2)
                XCTAssertEqual(flows.map(\.scheme), ["https", "https"], file: file, line: line)
                XCTAssertEqual(flows.map(\.status), [200, 200], file: file, line: line)
                XCTAssertEqual(flows.map { $0.tls?.clientVersion }, [version, version], file: file, line: line)
            }
        }
    }
}
