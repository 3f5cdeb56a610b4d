import ChildProcess
import Foundation
import ProxyModel
import TestSupport
import XCTest

/// gRPC through interception with a real gRPC server and client (Debian's `python3-grpcio`,
/// which `scripts/test` installs): the client reaches the server through the proxy, which
/// decrypts both legs and speaks HTTP/2 on both. Unary, server-streaming, client-streaming and
/// bidirectional calls return what the server sent, a failing call's status and message
/// (trailers) reach the client, and each call is one HTTP/2 flow.
final class HTTP2GRPCTests: XCTestCase {
    /// Debian's interpreter, where `python3-grpcio` installs (not a pyenv shim's).
    static let python = "/usr/bin/python3"

    func testFourCallKindsAndAFailingStatusThroughInterception() async throws {
        let check = try await ChildProcess.run(Self.python, ["-c", "import grpc"], timeout: 30)
        guard check.exitCode == 0 else {
            XCTFail("python3-grpcio is missing: run scripts/test (it installs it) or apt-get install python3-grpcio")
            return
        }
        let scratch = try TemporaryDirectory("proxyapp-grpc")
        defer { scratch.remove() }
        let origin = try await SelfSignedCertificate.make(in: scratch.url)
        let key = origin.key
        let certificate = origin.certificate
        let tls = try TLSFixtures(directory: scratch.url)
        let proxy = try await ProxyHarness.start(interception: { _ in
            try tls.interception(pins: nil, upstreamCA: certificate)
        })
        do {
            let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
                .appendingPathComponent("Support/Scripts/grpc_through_proxy.py")
            let run = try await ChildProcess.run(
                Self.python,
                [script.path, "--cert", certificate.path, "--key", key.path, "--proxy-ca", tls.proxyCAFile.path,
                 "--proxy-port", String(proxy.port)],
                timeout: 60)
            let stderr = String(decoding: run.stderr, as: UTF8.self)
            XCTAssertEqual(run.exitCode, 0, stderr)
            let result = try JSONSerialization.jsonObject(with: run.stdout) as? [String: Any]
            XCTAssertEqual(result?["unary"] as? String, "unary:hi", stderr)
            XCTAssertEqual(result?["server_stream"] as? [String], ["part0:x", "part1:x", "part2:x"])
            XCTAssertEqual(result?["client_stream"] as? String, "a+b+c")
            XCTAssertEqual(result?["bidi"] as? [String], ["echo:1", "echo:2"])
            let failure = result?["fail"] as? [String: String]
            XCTAssertEqual(failure?["code"], "NOT_FOUND")
            XCTAssertEqual(failure?["details"], "no such thing")

            let flows = try await proxy.waitForFlows(count: 5).filter { $0.kind == .http }
            XCTAssertEqual(Set(flows.map(\.path)), ["/test.Echo/Unary", "/test.Echo/ServerStream", "/test.Echo/ClientStream",
                                                    "/test.Echo/Bidi", "/test.Echo/Fail"])
            for flow in flows {
                XCTAssertEqual(flow.httpVersion, "HTTP/2.0", flow.path)
                XCTAssertEqual(flow.status, 200, flow.path)
                XCTAssertNil(flow.error, "\(flow.path): \(flow.error ?? "")")
                XCTAssertEqual(flow.responseHeaders.first(named: "content-type"), "application/grpc", flow.path)
                XCTAssertNotNil(flow.streamID, flow.path)
                // A call that fails before any message is answered "trailers-only": the status
                // is in the one HEADERS frame, so in the response headers.
                let status = flow.path == "/test.Echo/Fail" ? flow.responseHeaders.first(named: "grpc-status")
                    : flow.responseTrailers.first(named: "grpc-status")
                XCTAssertEqual(status, flow.path == "/test.Echo/Fail" ? "5" : "0", "\(flow.path): \(flow.responseTrailers)")
            }
            let failed = flows.first { $0.path == "/test.Echo/Fail" }
            XCTAssertEqual(failed?.responseHeaders.first(named: "grpc-message"), "no such thing")
        } catch {
            await proxy.shutdown()
            throw error
        }
        await proxy.shutdown()
    }
}
