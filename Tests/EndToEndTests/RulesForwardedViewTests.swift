import ChildProcess
import Foundation
import ProxyModel
import Rules
import RulesFile
import XCTest

/// The flow's origin side through the real proxy with curl: when a rule changes the request or
/// the response, the flow keeps the client's view in its own fields and what went to (or came
/// from) the origin in `forwardedRequest` / `originResponse`; a rule that changes nothing adds
/// nothing; bodies on the origin side obey the capture cap.
final class RulesForwardedViewTests: XCTestCase {
    /// Header and body rewrites on both messages: both views are stored, each as it crossed
    /// its leg.
    func testHeaderAndBodyRewriteStoresBothViews() async throws {
        try await InterceptingFixture.run { fixture in
            try fixture.useRules("""
                rules:
                  - name: edit
                    match: { host: 127.0.0.1 }
                    rewrite:
                      request_headers: { set: { User-Agent: rewritten }, remove: [X-Secret] }
                      request_body: [ { find: "password=hunter2", replace: "password=REDACTED" } ]
                      response_headers: { add: { X-Rewritten: "yes" } }
                      response_body: [ { regex: "line ([0-9]+) of", replace: "row $1 in" } ]
                """)
            let posted = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.origin.url("/echo"),
                                              ["-H", "X-Secret: s3", "-A", "curl-original",
                                               "-H", "Content-Type: application/x-www-form-urlencoded",
                                               "--data-binary", "user=a&password=hunter2"])
            XCTAssertEqual(posted.bodyText, "user=a&password=REDACTED", posted.result.summary)
            let gzip = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.origin.url("/gzip/2"))
            XCTAssertEqual(gzip.bodyText, "row 0 in the gzip route\nrow 1 in the gzip route\n")

            let flows = try await fixture.proxy.waitForFlows(count: 2)
            let post = flows[0]
            XCTAssertEqual(post.requestBody.bytes, Data("user=a&password=hunter2".utf8), "as sent by the client")
            XCTAssertEqual(post.requestHeaders.first(named: "User-Agent"), "curl-original")
            XCTAssertEqual(post.requestHeaders.first(named: "X-Secret"), "s3")
            let forwarded = try XCTUnwrap(post.forwardedRequest, "the request as forwarded")
            XCTAssertEqual(forwarded.body?.bytes, Data("user=a&password=REDACTED".utf8))
            XCTAssertEqual(forwarded.headers.first(named: "User-Agent"), "rewritten")
            XCTAssertNil(forwarded.headers.first(named: "X-Secret"))
            XCTAssertEqual(forwarded.headers.first(named: "Content-Length"), "24")
            XCTAssertEqual(forwarded.method, "POST")
            XCTAssertEqual(forwarded.path, "/echo")
            XCTAssertEqual(forwarded.port, fixture.origin.port)
            // The echo's response body did not match the response rule: only its head changed.
            XCTAssertEqual(post.responseHeaders.first(named: "X-Rewritten"), "yes", "as the client got it")
            let echoOrigin = try XCTUnwrap(post.originResponse)
            XCTAssertNil(echoOrigin.headers.first(named: "X-Rewritten"), "as the origin sent it")
            XCTAssertNil(echoOrigin.body, "the body was not changed: the client's")

            let get = flows[1]
            XCTAssertEqual(get.forwardedRequest?.headers.first(named: "User-Agent"), "rewritten")
            XCTAssertNil(get.forwardedRequest?.body, "no request body was changed")
            XCTAssertNil(get.responseHeaders.first(named: "Content-Encoding"), "the client got it decoded")
            let origin = try XCTUnwrap(get.originResponse)
            XCTAssertEqual(origin.status, 200)
            XCTAssertEqual(origin.headers.first(named: "Content-Encoding"), "gzip")
            XCTAssertEqual(origin.body?.bytes.prefix(2), Data([0x1F, 0x8B]), "the origin's gzip bytes")
            XCTAssertEqual(get.originSide.responseBody, origin.body)
        }
    }

    /// map_remote sends the request elsewhere: the forwarded URL and Host are stored, the
    /// response (unchanged) is not stored twice.
    func testMapRemoteStoresTheForwardedURL() async throws {
        try await InterceptingFixture.run { fixture in
            try fixture.useRules("""
                rules:
                  - name: remote
                    match: { host: api.test }
                    map_remote: { to: "\(fixture.origin.url("/headers"))" }
                """)
            let fetched = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://api.test/v1/items?x=1")
            XCTAssertEqual(fetched.status, 200, fetched.result.summary)
            let flows = try await fixture.proxy.waitForFlows(count: 1)
            let flow = try XCTUnwrap(flows.first)
            XCTAssertEqual(flow.url, "http://api.test/v1/items?x=1", "as sent by the client")
            let forwarded = try XCTUnwrap(flow.forwardedRequest)
            XCTAssertEqual(flow.originSide.url, fixture.origin.url(forwarded.path))
            XCTAssertTrue(forwarded.path.hasPrefix("/headers"), forwarded.path)
            XCTAssertEqual(forwarded.headers.first(named: "Host"), fixture.origin.authority)
            XCTAssertEqual(flow.requestHeaders.first(named: "Host"), "api.test")
            XCTAssertNil(forwarded.body)
            XCTAssertNil(flow.originResponse, "the response was not changed")
        }
    }

    /// The CLI on a capture a map-remote rule changed: `export --curl` repeats the client's
    /// request, `--forwarded` the forwarded one; `export --har` carries `_forwarded`, and
    /// `import` of that file into another capture keeps it (the curl commands agree).
    func testExportAndImportKeepTheForwardedRequest() async throws {
        let executable = try XCTUnwrap(ProxyAppProcess.builtExecutable, "build proxyapp first (`swift build --build-tests`)")
        try await InterceptingFixture.run { fixture in
            try fixture.useRules("""
                rules:
                  - name: remote
                    match: { host: api.test }
                    map_remote: { to: "\(fixture.origin.url("/echo"))" }
                """)
            _ = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://api.test/v1?x=1", ["--data-binary", "hello"])
            let flows = try await fixture.proxy.waitForFlows(count: 1)
            let id = try XCTUnwrap(flows.first?.id)
            let data = fixture.proxy.directory.path
            func proxyapp(_ arguments: [String]) async throws -> String {
                let outcome = try await ChildProcess.run(executable, arguments, timeout: 60)
                XCTAssertEqual(outcome.exitCode, 0, "\(arguments): \(String(decoding: outcome.stderr, as: UTF8.self))")
                return String(decoding: outcome.stdout, as: UTF8.self)
            }
            let client = try await proxyapp(["export", "--data-dir", data, "--curl", "\(id)"])
            XCTAssertTrue(client.contains("http://api.test/v1?x=1"), client)
            let forwarded = try await proxyapp(["export", "--data-dir", data, "--curl", "\(id)", "--forwarded"])
            XCTAssertTrue(forwarded.contains(fixture.origin.url("/echo")), forwarded)
            XCTAssertFalse(forwarded.contains("api.test"), forwarded)

            let har = fixture.proxy.file("capture.har")
            _ = try await proxyapp(["export", "--data-dir", data, "--har", har.path])
            XCTAssertTrue(String(decoding: try Data(contentsOf: har), as: UTF8.self).contains(#""_forwarded":{"request":"#))
            let other = fixture.proxy.file("other").path
            _ = try await proxyapp(["import", "--data-dir", other, "--har", har.path])
            let imported = try await proxyapp(["export", "--data-dir", other, "--curl", "1", "--forwarded"])
            XCTAssertEqual(imported, forwarded)
        }
    }

    /// Rules that match but change nothing store nothing extra; neither do flows without rules
    /// nor a dns override (same message, other address).
    func testRuleThatChangesNothingStoresNothing() async throws {
        try await InterceptingFixture.run { fixture in
            try fixture.useRules("""
                rules:
                  - name: noop
                    match: { host: 127.0.0.1 }
                    rewrite:
                      request_headers: { remove: [X-Absent] }
                      request_body: [ { find: "never-there", replace: "x" } ]
                      response_headers: { remove: [X-Absent] }
                      response_body: [ { find: "never-there", replace: "x" } ]
                      status: 200
                  - name: spoof
                    match: { host: spoofed.test }
                    dns: { to: [127.0.0.1] }
                """)
            _ = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.origin.url("/echo"), ["--data-binary", "abc"])
            _ = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.origin.url("/gzip/2"))
            _ = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://spoofed.test:\(fixture.origin.port)/status/200")
            let flows = try await fixture.proxy.waitForFlows(count: 3)
            XCTAssertEqual(flows.map(\.appliedRules), [["noop"], ["noop"], ["spoof"]])
            XCTAssertEqual(flows.map(\.hasOriginSide), [false, false, false])
        }
    }

    /// A rewritten body larger than the capture cap: both views keep at most `cap` bytes, with
    /// their full sizes; a body past the rewrite limit is sent unchanged and stores no second view.
    func testHugeRewrittenBodiesStayWithinTheCap() async throws {
        let rules = LiveRules()
        try await Fixture.run(rules: rules, { $0.maxCapturedBodyBytes = 1024 }) { proxy, origin in
            rules.replace(with: try RulesFile.parse("""
                rules:
                  - name: edit
                    match: { host: 127.0.0.1 }
                    rewrite:
                      request_body: [ { find: "a", replace: "bb" } ]
                      response_body: [ { find: "line", replace: "LINE" } ]
                """, file: "rules.yml", baseDirectory: proxy.directory.path), source: "rules.yml")
            let file = proxy.file("upload.txt")
            try Data(repeating: UInt8(ascii: "a"), count: 300_000).write(to: file)
            let upload = try await Curl.fetch(viaProxy: proxy.port, origin.url("/echo"),
                                              ["-H", "Expect:", "-H", "Content-Type: text/plain", "--data-binary", "@\(file.path)"])
            XCTAssertEqual(upload.header("X-Echo-Body-Length"), "600000", upload.result.summary)
            let huge = proxy.file("huge.txt")
            try Data(repeating: UInt8(ascii: "a"), count: 1_100_000).write(to: huge)
            let unchanged = try await Curl.fetch(viaProxy: proxy.port, origin.url("/echo"),
                                                 ["-H", "Expect:", "-H", "Content-Type: text/plain", "--data-binary", "@\(huge.path)"])
            XCTAssertEqual(unchanged.header("X-Echo-Body-Length"), "1100000", unchanged.result.summary)

            let gzip = try await Curl.fetch(viaProxy: proxy.port, origin.url("/gzip/20000"))
            XCTAssertEqual(gzip.body.count, GzipText.lines(20000).count, gzip.result.summary)

            let flows = try await proxy.waitForFlows(count: 3)
            let origin = try XCTUnwrap(flows[2].originResponse?.body, "the origin's gzip body, capped")
            XCTAssertEqual(origin.bytes.count, 1024)
            XCTAssertTrue(origin.truncated)
            XCTAssertGreaterThan(origin.size, 1024)
            XCTAssertEqual(origin.bytes.prefix(2), Data([0x1F, 0x8B]))
            XCTAssertEqual(flows[2].responseBody.bytes.count, 1024, "the client's decoded, rewritten body, capped")
            XCTAssertEqual(flows[2].responseBody.size, Int64(GzipText.lines(20000).count))
            let body = try XCTUnwrap(flows[0].forwardedRequest?.body)
            XCTAssertEqual(body.bytes, Data(repeating: UInt8(ascii: "b"), count: 1024))
            XCTAssertEqual(body.size, 600_000)
            XCTAssertTrue(body.truncated)
            XCTAssertEqual(flows[0].requestBody.bytes.count, 1024)
            XCTAssertNil(flows[1].forwardedRequest, "over the rewrite limit: sent unchanged")
            XCTAssertTrue(flows[1].note?.contains("not rewritten") ?? false, flows[1].note ?? "no note")
        }
    }
}
