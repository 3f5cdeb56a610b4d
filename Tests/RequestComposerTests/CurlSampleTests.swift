import Foundation
import ProxyModel
import RequestComposer
import XCTest

/// "Copy as cURL" output as browsers write it (Chrome's bash form with `$'…'` and `-b`, Firefox's
/// one-line form with `-H 'Cookie: …'` and `--data-raw`) and a hand-written multi-line command:
/// each parsed to the exact method, URL, headers and body curl would send.
final class CurlSampleTests: XCTestCase {
    private func sample(_ name: String) throws -> String {
        let url = try XCTUnwrap(Bundle.module.url(forResource: name, withExtension: "txt", subdirectory: "Samples"))
        return try String(contentsOf: url, encoding: .utf8)
    }

    private func parse(_ name: String) throws -> ComposedRequest {
        try CurlCommandLine.parse(sample(name)) { name in
            XCTFail("no file should be read, but \(name) was")
            return []
        }
    }

    private static let chromeAgent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36"
    private static let chromeHints: [HeaderField] = [
        HeaderField(name: "sec-ch-ua", value: #""Chromium";v="124", "Google Chrome";v="124", "Not-A.Brand";v="99""#),
        HeaderField(name: "sec-ch-ua-mobile", value: "?0"),
        HeaderField(name: "sec-ch-ua-platform", value: #""Linux""#),
        HeaderField(name: "sec-fetch-dest", value: "empty"),
        HeaderField(name: "sec-fetch-mode", value: "cors"),
        HeaderField(name: "sec-fetch-site", value: "same-origin"),
    ]
    private static let firefoxAgent = "Mozilla/5.0 (X11; Linux x86_64; rv:126.0) Gecko/20100101 Firefox/126.0"
    private static let firefoxAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"

    func testChromeGet() throws {
        let request = try parse("chrome-get")
        XCTAssertEqual(request.method, "GET")
        XCTAssertEqual(request.url, "https://shop.example.com/api/v2/products?category=shoes&page=2&sort=price%3Aasc")
        XCTAssertEqual(request.headers, [
            HeaderField(name: "accept", value: "application/json, text/plain, */*"),
            HeaderField(name: "accept-language", value: "en-GB,en-US;q=0.9,en;q=0.8"),
            HeaderField(name: "Cookie", value: "session_id=3f9a1c2e7b; _ga=GA1.1.1234567890.1716200000; consent=analytics%3Dfalse"),
            HeaderField(name: "priority", value: "u=1, i"),
            HeaderField(name: "referer", value: "https://shop.example.com/shoes?page=2"),
        ] + Self.chromeHints + [HeaderField(name: "user-agent", value: Self.chromeAgent)])
        XCTAssertEqual(request.body, [])
        XCTAssertEqual(request.httpVersion, "HTTP/1.1")
        XCTAssertFalse(request.insecure)
    }

    func testChromePostJSONWithAnsiCQuoting() throws {
        let request = try parse("chrome-post-json")
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.url, "https://notes.example.com/api/notes?draft=false")
        XCTAssertEqual(request.headers, [
            HeaderField(name: "accept", value: "*/*"),
            HeaderField(name: "accept-language", value: "en-US,en;q=0.9"),
            HeaderField(name: "content-type", value: "application/json"),
            HeaderField(name: "Cookie", value: "sid=s%3AQk9Hn2.x7Yw; theme=dark"),
            HeaderField(name: "origin", value: "https://notes.example.com"),
            HeaderField(name: "priority", value: "u=1, i"),
            HeaderField(name: "referer", value: "https://notes.example.com/notes/new"),
        ] + Self.chromeHints + [
            HeaderField(name: "user-agent", value: Self.chromeAgent),
            HeaderField(name: "x-csrf-token", value: "7d1e0c54-9b7a-4c1f-a3a8-0f2d2b6e9c11"),
        ])
        XCTAssertEqual(String(decoding: request.body, as: UTF8.self),
                       #"{"title":"Don't forget","body":"Line one\nLine two!","tags":["home","todo"],"pinned":false}"#)
    }

    func testFirefoxPostForm() throws {
        let request = try parse("firefox-post-form")
        XCTAssertEqual(request.method, "POST")
        XCTAssertEqual(request.url, "https://forum.example.org/login")
        XCTAssertEqual(request.headers, [
            HeaderField(name: "User-Agent", value: Self.firefoxAgent),
            HeaderField(name: "Accept", value: Self.firefoxAccept),
            HeaderField(name: "Accept-Language", value: "en-US,en;q=0.5"),
            HeaderField(name: "Accept-Encoding", value: "gzip, deflate, br, zstd"),
            HeaderField(name: "Content-Type", value: "application/x-www-form-urlencoded"),
            HeaderField(name: "Origin", value: "https://forum.example.org"),
            HeaderField(name: "Connection", value: "keep-alive"),
            HeaderField(name: "Referer", value: "https://forum.example.org/login?next=%2Finbox"),
            HeaderField(name: "Cookie", value: "csrftoken=Zx81kPq; lang=en"),
            HeaderField(name: "Upgrade-Insecure-Requests", value: "1"),
            HeaderField(name: "Sec-Fetch-Dest", value: "document"),
            HeaderField(name: "Sec-Fetch-Mode", value: "navigate"),
            HeaderField(name: "Sec-Fetch-Site", value: "same-origin"),
            HeaderField(name: "Sec-Fetch-User", value: "?1"),
            HeaderField(name: "Priority", value: "u=0, i"),
        ])
        XCTAssertEqual(String(decoding: request.body, as: UTF8.self),
                       "csrfmiddlewaretoken=Zx81kPq&username=alice&password=it%27s+a+secret&next=%2Finbox")
    }

    func testFirefoxGetWithCookieHeader() throws {
        let request = try parse("firefox-get-cookies")
        XCTAssertEqual(request.method, "GET")
        XCTAssertEqual(request.url, "https://news.example.net/search?q=rock+%26+roll&lang=en")
        XCTAssertEqual(request.headers, [
            HeaderField(name: "User-Agent", value: Self.firefoxAgent),
            HeaderField(name: "Accept", value: Self.firefoxAccept),
            HeaderField(name: "Accept-Language", value: "en-US,en;q=0.5"),
            HeaderField(name: "Accept-Encoding", value: "gzip, deflate, br, zstd"),
            HeaderField(name: "Connection", value: "keep-alive"),
            HeaderField(name: "Referer", value: "https://news.example.net/"),
            HeaderField(name: "Cookie", value: "prefs=dark%7Ccompact; sessionid=9b1f0a77c3; _pk_id.1.a1b2=5c9e1d2f3a4b5c6d.1716200000."),
            HeaderField(name: "Upgrade-Insecure-Requests", value: "1"),
            HeaderField(name: "Sec-Fetch-Dest", value: "document"),
            HeaderField(name: "Sec-Fetch-Mode", value: "navigate"),
            HeaderField(name: "Sec-Fetch-Site", value: "same-origin"),
            HeaderField(name: "Sec-Fetch-User", value: "?1"),
            HeaderField(name: "If-None-Match", value: #"W/"3f2-18f9a""#),
            HeaderField(name: "Priority", value: "u=0, i"),
        ])
        XCTAssertEqual(request.body, [])
    }

    /// Backslash continuations, a comment, `curl` by path, clustered flags, `--url`, `-u`,
    /// `'\''`, `Name;`, `Name:`, `--compressed` and `--data-urlencode` joined with `-d`.
    func testMultiLineFromAPIDocs() throws {
        let request = try parse("multiline-api-docs")
        XCTAssertEqual(request.method, "PUT")
        XCTAssertEqual(request.url, "https://api.example.net/v1/buckets/photos/objects?overwrite=true")
        XCTAssertEqual(request.headers, [
            HeaderField(name: "Authorization", value: "Basic " + Data("deploy-bot:s3cr3t!".utf8).base64EncodedString()),
            HeaderField(name: "Accept", value: "application/json"),
            HeaderField(name: "X-Note", value: #"it's "quoted""#),
            HeaderField(name: "X-Empty", value: ""),
            HeaderField(name: "Content-Type", value: "application/x-www-form-urlencoded"),
            HeaderField(name: "Accept-Encoding", value: "gzip, deflate, br, zstd"),
        ])
        XCTAssertEqual(String(decoding: request.body, as: UTF8.self),
                       "name=summer%202024%2Fbeach.jpg&caption=Sun%20%26%20sea&tags=holiday")
    }
}
