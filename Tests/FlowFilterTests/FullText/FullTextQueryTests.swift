import FlowFilter
import Foundation
import ProxyModel
import XCTest

/// `~fts`: the search syntax, how it reaches FTS5 (every word quoted), its refusals with the
/// character at fault, and its evaluation in Swift over a flow's document.
final class FullTextQueryTests: XCTestCase {
    private func rendered(_ text: String) throws -> String {
        try FullTextQuery(parsing: text).ftsQuery
    }

    func testSyntaxIsRenderedWithEveryWordQuoted() throws {
        XCTAssertEqual(try rendered("user_id 123"), #"("user id" AND "123")"#)
        XCTAssertEqual(try rendered(#""Invalid Token""#), #""invalid token""#)
        XCTAssertEqual(try rendered("tok*"), #""tok" *"#)
        XCTAssertEqual(try rendered("a OR b c"), #"("a" OR ("b" AND "c"))"#)
        XCTAssertEqual(try rendered("a b NOT c"), #"("a" AND ("b" NOT "c"))"#)
        XCTAssertEqual(try rendered("(a OR b) AND c"), #"(("a" OR "b") AND "c")"#)
        XCTAssertEqual(try rendered("url:login"), #"{url} : ("login")"#)
        XCTAssertEqual(try rendered("HEADERS:(a OR b)"), #"{request_headers response_headers} : (("a" OR "b"))"#)
        XCTAssertEqual(try rendered("{url body}:x"), #"{url request_body response_body} : ("x")"#)
        XCTAssertEqual(try rendered("response:x"), #"{response_headers response_body} : ("x")"#)
        // A URL is a phrase of its words; its colon names no field.
        XCTAssertEqual(try rendered("https://api.test/v1"), #""https api test v1""#)
        // Lower-case operators are words, and a quote inside quotes is doubled.
        XCTAssertEqual(try rendered("and or not"), #"(("and" AND "or") AND "not")"#)
        XCTAssertEqual(try rendered(#""say ""hi""""#), #""say hi""#)
        XCTAssertEqual(try rendered("Café naïve"), #"("cafe" AND "naive")"#)
    }

    /// What a person might paste, and FTS5 syntax it does not offer: each refused in words, at the
    /// character at fault (a filter's offsets count from the filter's start).
    func testMistakesAreRefusedAtTheirCharacter() throws {
        let cases: [(String, String, Int)] = [
            ("", "~fts needs words to search for", 0),
            ("url:(", "expected a search term", 5),
            ("a AND", "expected a search term", 5),
            ("NOT a", "NOT needs a search term before it (quote it to find the word itself)", 0),
            ("a OR OR b", "OR needs a search term before it (quote it to find the word itself)", 5),
            ("NEAR(a b)", "NEAR(…) is not supported: use a \"quoted phrase\" or AND", 0),
            ("a ... b", "'...' holds no letter or digit to search for", 2),
            ("\"a b", "unclosed quote", 0),
            ("a) b", "unexpected ')'", 1),
            ("(a b", "expected ')'", 4),
            ("{url nope}: x", "unknown field 'nope' (fields: url, headers, body, request, response)", 5),
            ("{}: x", "name at least one field between { and }", 0),
            ("{url} x", "expected ':' after '}'", 6),
            ("*", "expected a search term, not '*'", 0),
        ]
        for (text, message, position) in cases {
            XCTAssertThrowsError(try FullTextQuery(parsing: text), text) { error in
                let error = error as? FilterSyntaxError
                XCTAssertEqual(error?.message, message, text)
                XCTAssertEqual(error?.position, position, text)
            }
        }
        let many = (0...64).map { "w\($0)" }.joined(separator: " ")
        XCTAssertThrowsError(try FullTextQuery(parsing: many)) { error in
            XCTAssertEqual((error as? FilterSyntaxError)?.message, "too many search terms (at most 64)")
        }
        let long = String(repeating: "w.", count: 300)
        XCTAssertThrowsError(try FullTextQuery(parsing: long)) { error in
            XCTAssertEqual((error as? FilterSyntaxError)?.message, "too many words (at most 256)")
        }
        let deep = String(repeating: "(", count: 40) + "a" + String(repeating: ")", count: 40)
        XCTAssertThrowsError(try FullTextQuery(parsing: deep)) { error in
            XCTAssertEqual((error as? FilterSyntaxError)?.message, "nested too deeply (at most 16 levels)")
        }
        let fields = String(repeating: "url:", count: 40) + "a"
        XCTAssertThrowsError(try FullTextQuery(parsing: fields))
    }

    func testTheFilterLanguageCarriesSearches() throws {
        let filter = try FlowFilter(parsing: "~ftss 'invalid token' & ~c 401 | ~fts x*")
        XCTAssertEqual(filter.expression.fullTextSearches.map(\.ftsQuery), [#"("invalid" AND "token")"#, #""x" *"#])
        XCTAssertTrue(filter.expression.searchesFullText)
        XCTAssertFalse(filter.expression.readsBodies(besidesFullText: true))
        XCTAssertTrue(filter.expression.readsBodies)
        XCTAssertFalse(try FlowFilter(parsing: "~b x").expression.searchesFullText)

        // An error inside the search is reported at its character in the filter.
        XCTAssertEqual(syntaxError("~c 200 & ~fts 'a AND'")?.position, 20)
        XCTAssertEqual(syntaxError("~fts 'a AND'")?.message, "expected a search term")
        XCTAssertEqual(syntaxError("~fts")?.message, "~fts needs an argument")
        XCTAssertEqual(syntaxError("~fts url:(")?.position, 10)
        XCTAssertEqual(syntaxError(#"~fts '"open'"#)?.message, "unclosed quote")
        XCTAssertEqual(syntaxError(#"~fts '"open'"#)?.position, 6)
    }

    func testSwiftEvaluationFollowsTheIndexRules() throws {
        var flow = Flow(method: "POST", scheme: "https", host: "api.test", port: 443, path: "/v1/users?user_id=123",
                        requestHeaders: [HeaderField(name: "Content-Type", value: "application/json"),
                                         HeaderField(name: "X-Trace", value: "Café-7")],
                        status: 401)
        flow.requestBody = CapturedBody(bytes: Data(#"{"name":"Zoë","token":"abc"}"#.utf8), size: 28)
        flow.responseHeaders = [HeaderField(name: "Content-Type", value: "text/plain")]
        flow.responseBody = CapturedBody(bytes: Data("invalid token for user".utf8), size: 22)
        func matches(_ text: String) throws -> Bool { try FlowFilter(parsing: text).matches(flow) }

        XCTAssertTrue(try matches("~fts 'user_id 123'"))
        XCTAssertTrue(try matches(#"~fts '"user id 123"'"#))
        XCTAssertFalse(try matches(#"~fts '"user 123"'"#), "a phrase's words follow each other")
        XCTAssertTrue(try matches("~fts 'zoe cafe'"), "case and accents folded")
        XCTAssertTrue(try matches("~fts 'inval*'"))
        XCTAssertFalse(try matches("~fts 'nval*'"), "a prefix matches a word's start only")
        XCTAssertTrue(try matches(#"~ftss '"invalid token"'"#))
        XCTAssertFalse(try matches("~ftsq invalid"))
        XCTAssertTrue(try matches("~ftsq 'users AND abc'"), "the URL counts as the request's")
        XCTAssertFalse(try matches("~ftss users"))
        XCTAssertTrue(try matches("~fts 'url:users NOT body:users'"))
        XCTAssertFalse(try matches("~fts 'users NOT url:users'"))
        XCTAssertTrue(try matches("~fts 'headers:trace body:zoe'"))
        XCTAssertFalse(try matches("~fts 'headers:zoe'"))
        XCTAssertTrue(try matches("~fts 'token NOT nothere'"))
        XCTAssertFalse(try matches("~fts 'token NOT abc'"))
        XCTAssertTrue(try matches("~fts 'nothere OR abc'"))
    }

    /// Excerpts: a few words around the first marked word of each field that has one, marked
    /// words bracketed, `…` where the text goes on; NOT words are not marked.
    func testExcerptsAroundTheWordsFound() throws {
        let document = FullTextDocument(
            url: "https://api.test/v1/users/42", requestHeaders: "Authorization: Bearer abc\n", requestBody: "",
            responseHeaders: "Content-Type: text/plain\n",
            responseBody: "one two three four five six seven Invalid token here, then eight nine ten eleven twelve "
                + "thirteen fourteen fifteen sixteen seventeen eighteen")
        let search = try FullTextQuery(parsing: #""invalid token" OR user* NOT bearer"#)
        let excerpts = FullTextExcerpt.excerpts(of: document, search: search, start: "[", end: "]")
        XCTAssertEqual(excerpts.map(\.field), [.url, .responseBody])
        XCTAssertEqual(excerpts.first?.text, "https://api.test/v1/[users]/42", "whole: nothing cut off")
        XCTAssertEqual(excerpts.last?.text,
                       "…three four five six seven [Invalid] [token] here, then eight nine ten eleven twelve thirteen fourteen "
                       + "fifteen sixteen…")
        XCTAssertEqual(FullTextExcerpt.excerpts(of: document, search: search, side: .request, start: "[", end: "]").map(\.field),
                       [.url])
        XCTAssertTrue(FullTextExcerpt.excerpts(of: document, search: try FullTextQuery(parsing: "absent")).isEmpty)
    }
}
