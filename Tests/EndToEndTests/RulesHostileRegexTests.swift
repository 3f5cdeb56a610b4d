import Foundation
import XCTest

/// The attack of issue 13 §2 through the real proxy: a `path_regex` and a rewrite `regex` that a
/// backtracking engine takes exponential time over (`(a+)+$`), against a hostile URL and body.
/// With RE2 each request is answered, rightly, as fast as any other (before, ~0.7 s of an
/// event loop per 2 KB URL, and a 5 KB body held a blocking-pool thread for good).
final class RulesHostileRegexTests: XCTestCase {
    func testCatastrophicPatternsDoNotStallTheProxy() async throws {
        try await InterceptingFixture.run { fixture in
            try fixture.useRules("""
                rules:
                  - name: nested
                    match: { host: 127.0.0.1, path_regex: "^/status/2(0+)+$" }
                    block: { status: 451 }
                  - name: tail
                    match: { host: 127.0.0.1, path: /echo }
                    rewrite:
                      response_body: [ { regex: "(a+)+$", replace: "<tail>" }, { regex: "(x+x+)+y", replace: "never" } ]
                """)
            // 20,000 zeros and a 4: no match; the origin answers the unknown status route.
            let hostilePath = "/status/2" + String(repeating: "0", count: 20_000) + "4"
            for _ in 0..<5 {
                let forwarded = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.origin.url(hostilePath))
                XCTAssertNotEqual(forwarded.status, 451, forwarded.result.summary)
            }
            let blocked = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.origin.url("/status/200"))
            XCTAssertEqual(blocked.status, 451, blocked.result.summary)

            let body = fixture.proxy.directory.appendingPathComponent("hostile-body.txt")
            let run = String(repeating: "a", count: 100_000)
            for (text, expected) in [(run + "b" + String(repeating: "x", count: 50_000), nil), ("b" + run, "b<tail>")] {
                try Data(text.utf8).write(to: body)
                let echoed = try await Curl.fetch(viaProxy: fixture.proxy.port, fixture.origin.url("/echo"),
                                                  ["--data-binary", "@\(body.path)", "-H", "Content-Type: text/plain"])
                XCTAssertEqual(echoed.status, 200, echoed.result.summary)
                XCTAssertEqual(echoed.bodyText, expected ?? text)
            }
        }
    }
}
