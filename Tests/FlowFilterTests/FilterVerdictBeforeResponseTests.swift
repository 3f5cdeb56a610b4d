import FlowFilter
import Foundation
import ProxyModel
import XCTest

/// `verdictBeforeResponse`: what a breakpoint filter can decide from a request alone. A known
/// verdict must be what `matches` says once the response has come, whatever the response is.
final class FilterVerdictBeforeResponseTests: XCTestCase {
    /// A POST as the engine sees it when the request head has arrived: no body yet, no response.
    private let request = Flow(
        kind: .http, method: "POST", scheme: "https", host: "api.test", port: 443, path: "/v1/items",
        requestHeaders: [HeaderField(name: "Host", value: "api.test"),
                         HeaderField(name: "Content-Type", value: "application/json")])

    /// The same exchange finished in every way a response could change it.
    private var finished: [Flow] {
        var ok = request
        ok.requestBody = CapturedBody(bytes: Data(#"{"a":1}"#.utf8), size: 7)
        ok.status = 200
        ok.responseHeaders = [HeaderField(name: "Content-Type", value: "text/html"), HeaderField(name: "X-Cache", value: "hit")]
        ok.responseBody = CapturedBody(bytes: Data("<p>done</p>".utf8), size: 11)
        ok.appliedRules = ["Rewrite body"]
        var failed = request
        failed.error = "connection refused"
        var notFound = ok
        notFound.status = 404
        notFound.appliedRules = []
        return [ok, failed, notFound]
    }

    private func verdict(_ text: String) throws -> Bool? {
        try FlowFilter(parsing: text).verdictBeforeResponse(request)
    }

    func testRequestFactsDecideAndResponseFactsWait() throws {
        XCTAssertEqual(try verdict("~d api.test"), true)
        XCTAssertEqual(try verdict("~d other.test"), false)
        XCTAssertEqual(try verdict("~m GET"), false)
        XCTAssertEqual(try verdict("~hq json"), true)
        XCTAssertEqual(try verdict("~tq json"), true)
        XCTAssertEqual(try verdict("~t json"), true, "the request's content type already matches ~t")
        XCTAssertNil(try verdict("~t html"), "the response's may")
        XCTAssertNil(try verdict("~h X-Cache"))
        for text in ["~s", "~q", "~c 200", "~e", "~rule Rewrite", "~bq a", "~b a", "~bs done", "~hs X-Cache", "~ts html"] {
            XCTAssertNil(try verdict(text), text)
        }
    }

    /// Three-valued logic: a known false on one side of `&` decides it, a known true on one side
    /// of `|`; `!` keeps unknown unknown.
    func testCombinations() throws {
        XCTAssertEqual(try verdict("~s & ~d other.test"), false)
        XCTAssertEqual(try verdict("~d other.test & ~s"), false)
        XCTAssertNil(try verdict("~s & ~d api.test"))
        XCTAssertEqual(try verdict("~s | ~d api.test"), true)
        XCTAssertNil(try verdict("~s | ~d other.test"))
        XCTAssertEqual(try verdict("!~d other.test"), true)
        XCTAssertNil(try verdict("!~s"))
        XCTAssertEqual(try verdict("~d no-such-host.test & ~m POST"), false)
        XCTAssertEqual(try verdict("(~q | ~s) & ~d other.test"), false)
    }

    /// Whatever the response turns out to be, a known verdict is the final answer.
    func testAKnownVerdictIsTheFinalAnswer() throws {
        let corpus = ["~d api.test", "~d other.test", "~m POST", "~m GET", "~hq json", "~t json", "~t html", "~s & ~d other.test",
                      "~s | ~d api.test", "!~d other.test", "~c 200 | ~tq json", "!(~e | ~d api.test)", "~all", "~http & ~m POST",
                      "~h2 | ~replay", "~marked", "~websocket", "~tcp", "~u /v1/ & !~m GET", "~d api & (~c 404 | ~m PUT)"]
        var known = 0
        for text in corpus {
            let filter = try FlowFilter(parsing: text)
            guard let verdict = filter.verdictBeforeResponse(request) else { continue }
            known += 1
            XCTAssertEqual(filter.matches(request), verdict, "\(text): the request's own moment is one of the outcomes")
            for flow in finished {
                XCTAssertEqual(filter.matches(flow), verdict, "\(text) on a flow ending \(flow.status.map(String.init) ?? flow.error ?? "?")")
            }
        }
        XCTAssertGreaterThan(known, 12, "most of the corpus is decided by the request")
    }
}
