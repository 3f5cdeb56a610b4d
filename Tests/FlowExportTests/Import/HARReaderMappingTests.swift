import BodyCodec
import FlowExport
import Foundation
import ProxyModel
import XCTest

/// The field mapping of single entries: our own extras, tunnels, addresses, bodies that cannot be
/// encoded again, truncated bodies.
final class HARReaderMappingTests: XCTestCase {
    /// A one-entry HAR around `entry` (JSON object members after `startedDateTime`).
    private func importOne(_ members: String, file: StaticString = #filePath, line: UInt = #line) throws -> Flow {
        let json = #"{"log": {"entries": [{"startedDateTime": "2024-05-02T09:41:07Z", "# + members + "}]}}"
        let flows = try HARImportAssertions.flows(json, file: file, line: line)
        XCTAssertEqual(flows.count, 1, file: file, line: line)
        return try XCTUnwrap(flows.first, file: file, line: line)
    }

    func testOurOwnExtras() throws {
        let flow = try importOne(#"""
            "request": {"method": "GET", "url": "https://shop.test/"},
            "response": {"status": 200, "statusText": "OK"},
            "connection": "[::1]:50312", "serverIPAddress": "[::1]",
            "_marked": true, "_note": "looked odd", "_rules": ["Block ads", "say \"hi\" \\ ☃"],
            "_tls": {"clientVersion": "TLSv1.3", "clientCipher": "TLS_AES_128_GCM_SHA256", "alpn": "http/1.1",
                     "sni": "shop.test", "upstreamVersion": "TLSv1.2", "upstreamCipher": "ECDHE-RSA-AES128-GCM-SHA256",
                     "upstreamSubject": "CN=shop.test", "upstreamIssuer": "CN=Test CA",
                     "upstreamNotAfter": "2025-01-31T23:59:59Z"}
            """#)
        XCTAssertEqual(flow.clientAddress, "[::1]:50312")
        XCTAssertEqual(flow.serverAddress, "::1")
        XCTAssertTrue(flow.marked)
        XCTAssertEqual(flow.note, "looked odd")
        XCTAssertEqual(flow.appliedRules, ["Block ads", #"say "hi" \ ☃"#])
        let expected = TLSDetails(
            clientVersion: "TLSv1.3", clientCipher: "TLS_AES_128_GCM_SHA256", alpn: "http/1.1", sni: "shop.test",
            upstreamVersion: "TLSv1.2", upstreamCipher: "ECDHE-RSA-AES128-GCM-SHA256", upstreamSubject: "CN=shop.test",
            upstreamIssuer: "CN=Test CA", upstreamNotAfter: Date(timeIntervalSince1970: 1_738_367_999))
        XCTAssertEqual(flow.tls, expected)
    }

    /// `_rules` is read only when it is an array of strings; anything else is ignored, never an error.
    func testRulesOfAnotherShapeAreIgnored() throws {
        for rules in [#""Block ads""#, #"["a", 1]"#, "null", #"{"name": "a"}"#, "[[\"a\"]]", "true"] {
            let flow = try importOne(#""request": {"method": "GET", "url": "http://a.test/"}, "_rules": \#(rules)"#)
            XCTAssertEqual(flow.appliedRules, [], rules)
        }
        let none = try importOne(#""request": {"method": "GET", "url": "http://a.test/"}, "_rules": []"#)
        XCTAssertEqual(none.appliedRules, [])
    }

    /// Our export's `_rules` come back in order, and a flow without them comes back without them.
    func testRulesRoundTripThroughOurExport() throws {
        let flows = [SampleFlows.httpsWithTLS, SampleFlows.plain]
        let imported = try HARReader.flows(from: try exportHAR(flows))
        XCTAssertEqual(imported.map(\.appliedRules), flows.map(\.appliedRules))
        XCTAssertFalse(flows[0].appliedRules.isEmpty)
    }

    func testClientAddressOnlyFromIPAndPort() throws {
        let cases = ["127.0.0.1:5000": "127.0.0.1:5000", "443": "", "12345": "", "host.test:80": "", "1.2.3.4:": "",
                     "1.2.3:80": ""]
        for (connection, expected) in cases {
            let flow = try importOne(#""request": {"method": "GET", "url": "http://a.test/"}, "connection": "\#(connection)""#)
            XCTAssertEqual(flow.clientAddress, expected, connection)
        }
        let numeric = try importOne(#""request": {"method": "GET", "url": "http://a.test/"}, "connection": 7"#)
        XCTAssertEqual(numeric.clientAddress, "", "a number where a string belongs is ignored")
    }

    func testTunnels() throws {
        let ours = try importOne(#"""
            "request": {"method": "CONNECT", "url": "pinned.test:443"}, "response": {"status": 200},
            "_kind": "tunnel", "_bytesUp": 5120, "_bytesDown": 81920, "_note": "pinned: client rejected the certificate"
            """#)
        XCTAssertEqual(ours.kind, .tunnel)
        XCTAssertEqual(ours.scheme, "tcp", "as the engine records tunnels")
        XCTAssertEqual(ours.host, "pinned.test")
        XCTAssertEqual(ours.port, 443)
        XCTAssertEqual(ours.path, "")
        XCTAssertEqual(ours.bytesUp, 5120)
        XCTAssertEqual(ours.bytesDown, 81920)

        let withScheme = try importOne(#""request": {"method": "CONNECT", "url": "https://[2001:db8::1]:8443"}"#)
        XCTAssertEqual(withScheme.kind, .tunnel)
        XCTAssertEqual(withScheme.host, "2001:db8::1")
        XCTAssertEqual(withScheme.port, 8443)
        XCTAssertEqual(withScheme.path, "")
        XCTAssertNil(withScheme.status, "no response")
    }

    func testURLParts() throws {
        let cases: [(String, String, String, Int, String)] = [
            ("http://a.test", "http", "a.test", 80, "/"),
            ("https://a.test?q=1#top", "https", "a.test", 443, "/?q=1"),
            ("http://user:pw@[::1]:8080/x/../y?z", "http", "::1", 8080, "/x/../y?z"),
            ("wss://chat.test/socket", "https", "chat.test", 443, "/socket"),
            ("ws://chat.test:9000/", "http", "chat.test", 9000, "/"),
            ("HTTPS://Mixed.Test/Path", "https", "Mixed.Test", 443, "/Path"),
        ]
        for (url, scheme, host, port, path) in cases {
            let flow = try importOne(#""request": {"method": "GET", "url": "\#(url)"}"#)
            XCTAssertEqual([flow.scheme, flow.host, "\(flow.port)", flow.path], [scheme, host, "\(port)", path], url)
        }
    }

    func testHTTPVersions() throws {
        let cases = ["HTTP/1.1": "HTTP/1.1", "http/1.0": "HTTP/1.0", "http/2.0": "HTTP/2.0", "h2": "HTTP/2.0",
                     "HTTP/2": "HTTP/2.0", "h3": "HTTP/3.0", "HTTP/3": "HTTP/3.0", "": "HTTP/1.1", "SPDY/3.1": "SPDY/3.1"]
        for (given, expected) in cases {
            let flow = try importOne(#""request": {"method": "GET", "url": "http://a.test/", "httpVersion": "\#(given)"}"#)
            XCTAssertEqual(flow.httpVersion, expected, given)
        }
        let fromResponse = try importOne(#"""
            "request": {"method": "GET", "url": "http://a.test/", "httpVersion": ""},
            "response": {"status": 204, "httpVersion": "HTTP/1.0"}
            """#)
        XCTAssertEqual(fromResponse.httpVersion, "HTTP/1.0", "the response's version when the request has none")
    }

    /// An encoding we cannot produce: the decoded body is kept whole, and the note says so.
    func testBodyThatCannotBeEncodedAgainIsStoredDecodedWithANote() throws {
        let flow = try importOne(#"""
            "request": {"method": "GET", "url": "http://a.test/"},
            "response": {"status": 200, "headers": [{"name": "Content-Encoding", "value": "compress"}],
                         "content": {"text": "plain words"}, "bodySize": 9},
            "_note": "from a colleague"
            """#)
        XCTAssertEqual(String(decoding: flow.responseBody.bytes, as: UTF8.self), "plain words")
        XCTAssertEqual(flow.responseBody.size, 11, "never less than the bytes held")
        XCTAssertFalse(flow.responseBody.truncated)
        XCTAssertEqual(flow.note, "from a colleague; response body stored decoded: cannot encode with unknown content encoding 'compress'")
    }

    /// A writer that stored the body still encoded (base64 of the gzip stream) is not encoded twice.
    func testBodyAlreadyEncodedIsKept() throws {
        let gzip = try BodyEncoder.encode(Array("already gzip".utf8), contentEncoding: "gzip")
        let flow = try importOne(#"""
            "request": {"method": "GET", "url": "http://a.test/"},
            "response": {"status": 200, "headers": [{"name": "Content-Encoding", "value": "gzip"}],
                         "content": {"text": "\#(Data(gzip).base64EncodedString())", "encoding": "base64"}}
            """#)
        XCTAssertEqual(flow.responseBody.bytes, Data(gzip))
        XCTAssertNil(flow.note)
    }

    /// Our export writes an undecodable body raw (base64) with a remark, and a truncated one with
    /// another: both are read back, so the bytes are not encoded twice and `truncated` survives.
    func testOwnExportRemarksKeepRawAndTruncatedBodies() throws {
        let full = try BodyEncoder.encode(Array(String(repeating: "abcdef", count: 200).utf8), contentEncoding: "br")
        let prefix = Array(full.prefix(full.count / 2))
        let flow = try importOne(#"""
            "request": {"method": "GET", "url": "http://a.test/"},
            "response": {"status": 200, "headers": [{"name": "Content-Encoding", "value": "br"}], "bodySize": \#(full.count),
                         "content": {"text": "\#(Data(prefix).base64EncodedString())", "encoding": "base64"}},
            "comment": "response body truncated: \#(prefix.count) of \#(full.count) bytes captured; response body: corrupt br body (truncated): shown as captured"
            """#)
        XCTAssertEqual(flow.responseBody, CapturedBody(bytes: Data(prefix), size: Int64(full.count), truncated: true))
        XCTAssertNil(flow.note)
    }

    /// Another tool's cut-off gzip stream (base64, no remark) is recognised by its header.
    func testCutOffCompressedStreamIsKeptRaw() throws {
        let gzip = try BodyEncoder.encode(Array(String(repeating: "xyz", count: 500).utf8), contentEncoding: "gzip")
        let cut = Array(gzip.prefix(10))
        let flow = try importOne(#"""
            "request": {"method": "GET", "url": "http://a.test/"},
            "response": {"status": 200, "headers": [{"name": "Content-Encoding", "value": "gzip"}],
                         "content": {"text": "\#(Data(cut).base64EncodedString())", "encoding": "base64"}}
            """#)
        XCTAssertEqual(flow.responseBody.bytes, Data(cut))
        XCTAssertFalse(flow.responseBody.truncated, "nothing says it was truncated")
    }

    func testRequestBodies() throws {
        let chromeBinary = try importOne(#"""
            "request": {"method": "POST", "url": "http://a.test/upload", "bodySize": 3,
                        "postData": {"mimeType": "application/octet-stream", "text": "AP8A", "_encoding": "base64"}}
            """#)
        XCTAssertEqual(chromeBinary.requestBody.bytes, Data([0x00, 0xFF, 0x00]))

        let gzipped = try importOne(#"""
            "request": {"method": "POST", "url": "http://a.test/", "headers": [{"name": "Content-Encoding", "value": "gzip"}],
                        "postData": {"mimeType": "text/plain", "text": "squeezed"}}
            """#)
        XCTAssertEqual(HARImportAssertions.decodedText(gzipped.requestBody, headers: gzipped.requestHeaders), "squeezed")
        XCTAssertEqual(gzipped.requestBody.bytes.prefix(2), Data([0x1F, 0x8B]))
    }

    /// A HAR saved without content (Firefox without "with content", for instance) still says the
    /// body had bytes: the flow shows an empty, truncated body of that size.
    func testBodyLeftOutOfTheFileIsTruncated() throws {
        let flow = try importOne(#"""
            "request": {"method": "GET", "url": "http://a.test/"},
            "response": {"status": 200, "content": {"size": 5000, "mimeType": "text/html"}, "bodySize": 1200}
            """#)
        XCTAssertEqual(flow.responseBody, CapturedBody(bytes: Data(), size: 1200, truncated: true))
    }

    func testErrorsAndStatus() throws {
        let ours = try importOne(#"""
            "request": {"method": "GET", "url": "http://a.test/"},
            "response": {"status": 0, "content": {"size": 0, "mimeType": "x-unknown"}, "_error": "connection refused"},
            "comment": "connection refused"
            """#)
        XCTAssertNil(ours.status)
        XCTAssertEqual(ours.error, "connection refused")

        let entryLevel = try importOne(#"""
            "request": {"method": "GET", "url": "http://a.test/"}, "response": {"status": 502, "statusText": "Bad Gateway"},
            "_error": "upstream closed the connection"
            """#)
        XCTAssertEqual(entryLevel.status, 502)
        XCTAssertEqual(entryLevel.error, "upstream closed the connection")

        let noResponse = try importOne(#""request": {"method": "GET", "url": "http://a.test/"}, "response": null"#)
        XCTAssertNil(noResponse.status)
        XCTAssertNil(noResponse.error)
        XCTAssertNil(noResponse.finishedAt, "no time given")
    }

    func testEmptyLogImportsNothing() throws {
        XCTAssertEqual(try HARReader.flows(from: Data(#"{"log": {"version": "1.2", "entries": []}}"#.utf8)), [])
    }

    /// The extremes the parser and the duration check allow still make a flow (no trap).
    func testExtremeDatesAndDurations() throws {
        let json = #"{"log": {"entries": [{"startedDateTime": "9999-12-31T23:59:59.999+00:00", "time": 315000000000, "#
            + #""request": {"method": "GET", "url": "http://a.test/"}}, "#
            + #"{"startedDateTime": "0000-01-01T00:00:00-23:59", "time": -1e300, "#
            + #""request": {"method": "GET", "url": "http://a.test/"}}]}}"#
        let flows = try HARImportAssertions.flows(json)
        XCTAssertEqual(flows.count, 2)
        XCTAssertEqual(flows[0].finishedAt, flows[0].startedAt.addingTimeInterval(315_000_000))
        XCTAssertNil(flows[1].finishedAt)
    }

    /// A stray Latin-1 byte (not UTF-8) does not refuse the file: it reads as U+FFFD.
    func testInvalidUTF8IsRepaired() throws {
        var data = Data(#"{"log": {"entries": [{"startedDateTime": "2024-05-02T09:41:07Z", "request": {"method": "GET", "#.utf8)
        data += Data(#""url": "http://a.test/", "headers": [{"name": "X-Name", "value": "caf"#.utf8)
        data.append(0xE9)
        data += Data(#""}]}}]}}"#.utf8)
        let flows = try HARReader.flows(from: data)
        XCTAssertEqual(flows.first?.requestHeaders, [HeaderField(name: "X-Name", value: "caf\u{FFFD}")])
    }
}
