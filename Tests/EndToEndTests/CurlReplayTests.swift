import ChildProcess
import FlowExport
import Foundation
import ProxyModel
import XCTest

/// `proxyapp export --curl ID` reproduces the request: the rendered command, run by a real
/// shell through the proxy, makes the origin receive what it received the first time (method,
/// target, headers, body bytes), and the proxy captures the same request again.
///
/// The command is run unchanged: the proxy comes from `http_proxy`/`HTTPS_PROXY` and the CA from
/// `CURL_CA_BUNDLE`, set by the shell script in front of it.
final class CurlReplayTests: XCTestCase {
    /// Headers whose POSITION may change in the replay (their names and values may not).
    ///
    /// curl writes the headers it could generate itself (Host, User-Agent, Accept, Content-Type,
    /// Content-Length, and Proxy-Connection towards a proxy) where it likes: its defaults in its
    /// own order, the same headers given with `-H` among the custom ones. A command cannot choose
    /// that order, so these are compared as a multiset; every other header keeps its order.
    private static let headersCurlPlaces: Set<String> = [
        "host", "user-agent", "accept", "content-type", "content-length", "proxy-connection",
    ]

    /// One request to capture and replay.
    private struct Request {
        var name: String
        /// Path and query on the origin.
        var path: String
        var https = false
        /// curl arguments of the original request (the URL and proxy are added).
        var arguments: [String]
    }

    func testRenderedCommandsReproduceTheRequests() async throws {
        try await InterceptingFixture.run { setup in
            let binary = setup.proxy.file("binary.bin")
            try Data([0x00, 0x01, 0x00, 0xFF, 0x27, 0x22, 0x0A, 0x40, 0x00] + Array(0...255) + [0x00]).write(to: binary)
            let requests = [
                Request(name: "GET with query and custom headers", path: "/echo?q=a%20b&x=1&empty=&flag",
                        arguments: ["-H", "X-Quote: it's a 'quoted' value", "-H", "X-Dollar: $HOME `id` \\n",
                                    "-H", "X-Empty;", "-H", "Accept-Encoding: gzip", "-H", "Cookie: a=1; b=2"]),
                Request(name: "POST text body", path: "/echo",
                        arguments: ["--data-binary", "name=it's&text=line one\nline two"]),
                Request(name: "POST binary body with NUL bytes", path: "/echo",
                        arguments: ["-H", "Content-Type: application/octet-stream", "-H", "Expect:",
                                    "--data-binary", "@\(binary.path)"]),
                Request(name: "PUT JSON", path: "/echo/item/7",
                        arguments: ["-X", "PUT", "-H", "Content-Type: application/json",
                                    "--data-binary", #"{"name":"O'Brien","tags":["a","b"],"n":1}"#]),
                Request(name: "HEAD", path: "/bytes/64", arguments: ["--head"]),
                Request(name: "HTTPS POST through interception", path: "/echo?tls=1", https: true,
                        arguments: ["--cacert", setup.tls.proxyCAFile.path, "-H", "Authorization: Bearer 'x'",
                                    "--data-binary", "over tls"]),
            ]
            var captured = 0
            for request in requests {
                try await replay(request, setup: setup, capturedBefore: &captured)
            }
        }
    }

    /// Sends `request` with curl, renders the captured flow as a curl command, runs that through
    /// the proxy and compares both what the origin received and what the proxy captured.
    private func replay(_ request: Request, setup: InterceptingFixture, capturedBefore captured: inout Int) async throws {
        let origin = request.https ? setup.tlsOrigin : setup.origin
        let url = request.https ? setup.tlsURL(request.path) : origin.url(request.path)
        let received = origin.log.requests.count

        let fetched = try await Curl.fetch(viaProxy: setup.proxy.port, url, request.arguments)
        XCTAssertEqual(fetched.result.exitCode, 0, "\(request.name): \(fetched.result.summary)")
        let original = try await nextRequestFlow(setup.proxy, after: &captured, request.name)
        let command = CurlCommand.render(original)

        let run = try await runThroughProxy(command, setup: setup)
        XCTAssertEqual(run.exitCode, 0, "\(request.name): `\(command)` failed: \(String(decoding: run.stderr, as: UTF8.self))")
        XCTAssertFalse(run.killed, "\(request.name): the replay did not finish")
        let replayed = try await nextRequestFlow(setup.proxy, after: &captured, request.name)

        let seen = origin.log.requests
        guard seen.count == received + 2 else {
            return XCTFail("\(request.name): the origin received \(seen.count - received) requests, expected 2\n\(command)")
        }
        assertSameRequest(seen[received], seen[received + 1], request.name, command: command)
        XCTAssertEqual(replayed.method, original.method, request.name)
        XCTAssertEqual(replayed.url, original.url, request.name)
        XCTAssertEqual(replayed.httpVersion, original.httpVersion, request.name)
        assertSameHeaders(replayed.requestHeaders, original.requestHeaders, "captured: \(request.name)\n\(command)")
        XCTAssertEqual(replayed.requestBody, original.requestBody, request.name)
    }

    /// What the origin received the second time equals the first: request line, headers (see
    /// `assertSameHeaders`), body bytes.
    private func assertSameRequest(_ first: OriginLog.Request, _ second: OriginLog.Request, _ name: String,
                                   command: String) {
        let context = "\(name)\n\(command)"
        XCTAssertEqual(second.method, first.method, context)
        XCTAssertEqual(second.uri, first.uri, context)
        XCTAssertEqual(second.version, first.version, context)
        assertSameHeaders(second.headers, first.headers, "at the origin: \(context)")
        XCTAssertEqual(second.bodyLength, first.bodyLength, context)
        XCTAssertEqual(second.bodyPrefix, first.bodyPrefix, context)
        XCTAssertEqual(second.bodyChecksum, first.bodyChecksum, context)
    }

    /// The same names and values, duplicates included; in the same order except for
    /// `headersCurlPlaces`, which may move.
    private func assertSameHeaders(_ replayed: [HeaderField], _ original: [HeaderField], _ context: String) {
        let unplaced = { (headers: [HeaderField]) in
            headers.filter { !Self.headersCurlPlaces.contains($0.name.lowercased()) }
        }
        let multiset = { (headers: [HeaderField]) in
            headers.map { "\($0.name.lowercased()): \($0.value)" }.sorted()
        }
        XCTAssertEqual(unplaced(replayed), unplaced(original), context)
        XCTAssertEqual(multiset(replayed), multiset(original), context)
    }

    /// Runs `command` with `/bin/sh`; the proxy and the CA the command needs come from the
    /// environment, so the command is exactly what `proxyapp export --curl` prints.
    private func runThroughProxy(_ command: String, setup: InterceptingFixture) async throws -> ChildProcess.Outcome {
        let environment = """
            export http_proxy='\(setup.proxy.proxyURL)'
            export HTTPS_PROXY='\(setup.proxy.proxyURL)'
            export CURL_CA_BUNDLE='\(setup.tls.proxyCAFile.path)'

            """
        return try await ChildProcess.run("/bin/sh", ["-c", environment + command], timeout: 30)
    }

    /// The next captured HTTP request (CONNECT flows of the HTTPS case left out), waiting at most
    /// 10 seconds for it to be stored.
    private func nextRequestFlow(_ proxy: ProxyHarness, after captured: inout Int, _ name: String) async throws -> Flow {
        let deadline = Date().addingTimeInterval(10)
        var requests: [Flow] = []
        repeat {
            requests = try proxy.flushedFlows().filter { $0.kind == .http && $0.method != "CONNECT" }
            if requests.count > captured { break }
            try await Task.sleep(nanoseconds: 10_000_000)
        } while Date() < deadline
        let flow = try XCTUnwrap(requests.count == captured + 1 ? requests.last : nil,
                                 "\(name): expected request flow #\(captured + 1), the store holds \(requests.count)")
        captured += 1
        return flow
    }
}
