import Foundation
import HARValidation
import XCTest

/// The validator can fail: each broken document is rejected with the rule it breaks.
final class HARValidatorTests: XCTestCase {
    private func document(entry: String, pages: String = #"[{"startedDateTime":"2026-11-22T10:01:02.345Z","id":"page_1","title":"t","pageTimings":{}}]"#) -> Data {
        Data(#"{"log":{"version":"1.2","creator":{"name":"x","version":"1"},"pages":\#(pages),"entries":[\#(entry)]}}"#.utf8)
    }

    private let goodEntry = #"{"pageref":"page_1","startedDateTime":"2026-11-22T10:01:02.345Z","time":3.5,"request":{"method":"GET","url":"http://a/","httpVersion":"HTTP/1.1","headers":[],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":0},"response":{"status":200,"statusText":"OK","httpVersion":"HTTP/1.1","headers":[],"cookies":[],"content":{"size":0,"mimeType":"x-unknown"},"redirectURL":"","headersSize":-1,"bodySize":0},"cache":{},"timings":{"blocked":-1,"dns":1,"connect":-1,"send":0,"wait":2.5,"receive":0,"ssl":-1}}"#

    func testAcceptsAValidDocument() {
        XCTAssertEqual(HARValidator.problems(in: document(entry: goodEntry)), [])
        let withRules = goodEntry.replacingOccurrences(of: #""cache":{}"#, with: #""cache":{},"_rules":["a","b"]"#)
        XCTAssertEqual(HARValidator.problems(in: document(entry: withRules)), [])
    }

    func testRejectsBrokenDocuments() {
        let breakages: [(String, String, String)] = [
            (#""time":3.5"#, #""time":4"#, "not the sum"),
            (#""time":3.5"#, #""time":"3.5""#, "must be a number"),
            (#""status":200"#, #""status":true"#, "must be a number"),
            (#""startedDateTime":"2026-11-22T10:01:02.345Z","time""#, #""startedDateTime":"2026-11-22T10:01:02Z","time""#, "milliseconds"),
            (#""pageref":"page_1""#, #""pageref":"page_2""#, "names no page"),
            (#""cache":{}"#, #""cache":{},"extra":1"#, "must start with '_'"),
            (#""content":{"size":0,"mimeType":"x-unknown"}"#, #""content":{"size":0,"mimeType":"x","text":"AA==","encoding":"hex"}"#, "only \"base64\""),
            (#""wait":2.5"#, #""wait":-1"#, "non-negative"),
            (#""ssl":-1"#, #""ssl":1"#, "must include ssl"),
            (#""dns":1"#, #""dns":-2"#, "-1 or non-negative"),
            (#""bodySize":0},"response""#, #""bodySize":-3},"response""#, "-1 or non-negative"),
            (#""headers":[],"queryString""#, #""headers":[{"name":"a"}],"queryString""#, "must be a string"),
            (#""url":"http://a/""#, #""url":"a b""#, "absolute URL"),
            (#""cache":{}"#, #""cache":{},"_rules":"a""#, "_rules: must be an array"),
            (#""cache":{}"#, #""cache":{},"_rules":["a",1]"#, "_rules[1]: must be a string"),
            (#""cache":{}"#, #""cache":{},"_rules":[]"#, "only when a rule acted"),
        ]
        for (original, broken, expected) in breakages {
            let entry = goodEntry.replacingOccurrences(of: original, with: broken)
            XCTAssertNotEqual(entry, goodEntry, "the breakage \(broken) did not apply")
            let problems = HARValidator.problems(in: document(entry: entry))
            XCTAssertFalse(problems.isEmpty, "accepted: \(broken)")
            XCTAssertTrue(problems.contains { $0.contains(expected) }, "\(broken): \(problems)")
        }
        XCTAssertTrue(HARValidator.problems(in: document(entry: goodEntry, pages: "[]")).contains { $0.contains("at least one page") })
        XCTAssertTrue(HARValidator.problems(in: Data("{\"log\":".utf8)).contains { $0.contains("not JSON") })
    }
}
