import Foundation
import ProxyModel
import RequestComposer
import XCTest

/// Each supported curl option builds what curl would send; options spelled every way curl (and
/// `--name=value`) allows.
final class CurlOptionTests: XCTestCase {
    private func parse(_ line: String, files: [String: String] = [:]) throws -> ComposedRequest {
        try CurlCommandLine.parse(line) { name in
            guard let text = files[name] else { throw CocoaError(.fileNoSuchFile) }
            return Array(text.utf8)
        }
    }

    private func body(_ request: ComposedRequest) -> String { String(decoding: request.body, as: UTF8.self) }

    private func field(_ name: String, _ value: String) -> HeaderField { HeaderField(name: name, value: value) }

    func testGluedClusteredAndEqualsForms() throws {
        let request = try parse("curl -sSLkXPATCH -HX-One:\\ 1 --header=X-Two:2 --request=PUT https://a.test/x")
        XCTAssertEqual(request.method, "PUT")
        XCTAssertEqual(request.headers, [field("X-One", "1"), field("X-Two", "2")])
        XCTAssertTrue(request.insecure)
        let glued = try parse("curl -sXPOST -d a=1 https://a.test/")
        XCTAssertEqual(glued.method, "POST")
    }

    func testDataFamily() throws {
        let files = ["form.txt": "a=1\r\nb=2\n", "raw.bin": "line1\r\nline2\n", "note.txt": "x y&z"]
        let request = try parse("curl https://a.test/ -d @form.txt --data x=1 --data-ascii y=2", files: files)
        XCTAssertEqual(body(request), "a=1b=2&x=1&y=2", "-d @file drops CR and LF, parts joined with &")
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.headers, [field("Content-Type", "application/x-www-form-urlencoded")])
        XCTAssertEqual(body(try parse("curl https://a.test/ --data-binary @raw.bin", files: files)), "line1\r\nline2\n")
        XCTAssertEqual(body(try parse("curl https://a.test/ --data-raw @raw.bin", files: files)), "@raw.bin")
        let encoded = try parse("curl https://a.test/ --data-urlencode 'a b' --data-urlencode '=c&d' --data-urlencode 'n=é/1' "
            + "--data-urlencode @note.txt --data-urlencode m@note.txt", files: files)
        XCTAssertEqual(body(encoded), "a%20b&c%26d&n=%C3%A9%2F1&x%20y%26z&m=x%20y%26z")
    }

    func testGetPutsDataInTheQuery() throws {
        let request = try parse("curl -G https://a.test/s?q=1 -d x=2 --data-urlencode 'y=a b'")
        XCTAssertEqual(request.method, "GET")
        XCTAssertEqual(request.url, "https://a.test/s?q=1&x=2&y=a%20b")
        XCTAssertEqual(request.body, [])
        XCTAssertEqual(request.headers, [])
        XCTAssertEqual(try parse("curl --get -d x=2 https://a.test/s").url, "https://a.test/s?x=2")
    }

    func testHeadAndExplicitMethod() throws {
        XCTAssertEqual(try parse("curl -I https://a.test/").method, "HEAD")
        XCTAssertEqual(try parse("curl --head https://a.test/").method, "HEAD")
        XCTAssertEqual(try parse("curl -X DELETE https://a.test/ -d x").method, "DELETE")
        XCTAssertThrowsError(try parse("curl -I https://a.test/ -d x"))
    }

    func testUserCookieAgentReferer() throws {
        let request = try parse("curl https://a.test/ -u 'bob:pa:ss' -b 'a=1' -b 'b=2' -A 'Agent/1' -e 'https://r.test/;auto'")
        XCTAssertEqual(request.headers, [
            field("Authorization", "Basic " + Data("bob:pa:ss".utf8).base64EncodedString()),
            field("Cookie", "a=1; b=2"), field("User-Agent", "Agent/1"), field("Referer", "https://r.test/"),
        ])
        XCTAssertThrowsError(try parse("curl https://a.test/ -u bob")) { error in
            XCTAssertTrue("\(error)".contains("user:password"), "\(error)")
        }
        XCTAssertThrowsError(try parse("curl https://a.test/ -b cookies.txt")) { error in
            XCTAssertTrue("\(error)".contains("cookie file"), "\(error)")
        }
    }

    func testHeaderOverridesAndRemovals() throws {
        let request = try parse("curl https://a.test/ -A one -H 'User-Agent: two' -e r -H 'Referer:' -H 'X-Empty;' -H 'X-Gone:' "
            + "-H 'Content-Length: 3' -H 'Transfer-Encoding: chunked' -H 'Content-Type:' -d abc")
        XCTAssertEqual(request.headers, [field("User-Agent", "two"), field("X-Empty", "")],
                       "-H wins over -A, 'Referer:' drops -e and the form default, framing headers are dropped")
        XCTAssertEqual(body(request), "abc")
    }

    func testCompressed() throws {
        XCTAssertEqual(try parse("curl --compressed https://a.test/").headers, [field("Accept-Encoding", "gzip, deflate, br, zstd")])
        XCTAssertEqual(try parse("curl --compressed -H 'Accept-Encoding: br' https://a.test/").headers, [field("Accept-Encoding", "br")])
        XCTAssertThrowsError(try parse("curl --compressed=yes https://a.test/"))
    }

    func testVersionsAndIgnoredOptions() throws {
        XCTAssertEqual(try parse("curl --http2 https://a.test/").httpVersion, "HTTP/2")
        XCTAssertEqual(try parse("curl --http2-prior-knowledge https://a.test/").httpVersion, "HTTP/2")
        XCTAssertEqual(try parse("curl --http2 --http1.1 https://a.test/").httpVersion, "HTTP/1.1")
        let ignored = try parse("curl -s -S -v -i -L -g --globoff --location --path-as-is -o out.html --output=x https://a.test/")
        XCTAssertEqual(ignored, ComposedRequest(method: "GET", url: "https://a.test/"))
    }

    func testURLForms() throws {
        XCTAssertEqual(try parse("curl https://a.test").url, "https://a.test/")
        XCTAssertEqual(try parse("curl 'HTTP://a.test:8080?x=1#frag'").url, "http://a.test:8080/?x=1")
        XCTAssertEqual(try parse("curl 'https://a.test/p/[1-3]/{a,b}?q=é'").url, "https://a.test/p/[1-3]/{a,b}?q=%C3%A9",
                       "no globbing; non-ASCII percent-encoded")
        XCTAssertEqual(try parse("curl 'http://[::1]:9000/x'").url, "http://[::1]:9000/x")
        XCTAssertEqual(try parse("curl --url https://a.test/u").url, "https://a.test/u")
        XCTAssertEqual(try parse("curl -- https://a.test/-x").url, "https://a.test/-x")
        let withUser = try parse("curl 'https://us%40er:p%3Ass@a.test/'")
        XCTAssertEqual(withUser.url, "https://a.test/")
        XCTAssertEqual(withUser.headers, [field("Authorization", "Basic " + Data("us@er:p:ss".utf8).base64EncodedString())])
        XCTAssertThrowsError(try parse("curl https://a.test:99999/"))
        XCTAssertThrowsError(try parse("curl example.com/path")) { error in
            XCTAssertTrue("\(error)".contains("https://"), "\(error)")
        }
    }

    func testShellQuotingForms() throws {
        let request = try parse(#"curl https://a.test/ -H $'X-A: \x41\101\u00e9\t!\'' -H "X-B: a\"b\$c\\d\e" -H X-C:\ c\ d"#)
        XCTAssertEqual(request.headers, [field("X-A", "AAé\t!'"), field("X-B", #"a"b$c\d\e"#), field("X-C", "c d")])
        let windows = try parse("curl https://a.test/ \\\r\n  -H 'X: 1'\r\n")
        XCTAssertEqual(windows.headers, [field("X", "1")])
        XCTAssertEqual(try parse("C:/tools/curl https://a.test/").url, "https://a.test/")
        XCTAssertEqual(try parse("# copied\n\n  curl https://a.test/ # trailing comment\n").url, "https://a.test/")
    }

    func testProxyAndUnsupportedOptionsAreNamed() {
        for line in ["curl -x http://p:3128 https://a.test/", "curl --proxy=http://p https://a.test/"] {
            XCTAssertThrowsError(try parse(line)) { error in
                XCTAssertEqual((error as? ComposeError)?.message, "the request goes through ProxyApp; remove --proxy")
            }
        }
        for (line, option) in [("curl -T f https://a.test/", "-T"), ("curl -F a=b https://a.test/", "-F"),
                               ("curl --json {} https://a.test/", "--json"), ("curl --http1.0 https://a.test/", "--http1.0")] {
            XCTAssertThrowsError(try parse(line)) { error in
                XCTAssertEqual((error as? ComposeError)?.message, "curl option \(option) is not supported by import; remove it")
            }
        }
    }
}
