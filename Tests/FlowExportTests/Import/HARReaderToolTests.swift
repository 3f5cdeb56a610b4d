import FlowExport
import Foundation
import ProxyModel
import XCTest

/// HAR files in the shapes other tools write (Chrome, Firefox, mitmproxy, Charles) import with
/// every field we keep mapped, and their extras ignored.
final class HARReaderToolTests: XCTestCase {
    func testChromeDevToolsHAR() throws {
        let flows = try HARImportAssertions.flows(ChromeHAR.json)
        XCTAssertEqual(flows.count, 4)

        let page = flows[0]
        XCTAssertNil(page.id)
        XCTAssertEqual(page.kind, .http)
        XCTAssertEqual(page.startedAt.timeIntervalSince1970, 1_714_642_867.121, accuracy: 0.0005)
        XCTAssertEqual(page.durationMilliseconds ?? -1, 215.43, accuracy: 0.01)
        XCTAssertEqual(page.url, "https://example.com/?lang=en")
        XCTAssertEqual(page.httpVersion, "HTTP/2.0")
        XCTAssertEqual(page.requestHeaders.map(\.name),
                       [":authority", ":method", ":path", ":scheme", "accept", "accept-encoding", "user-agent"])
        XCTAssertEqual(page.status, 200)
        XCTAssertNil(page.reason, "HTTP/2 has no reason phrase; Chrome writes an empty one")
        XCTAssertNil(page.error, "Chrome's `_error: null` is no error")
        XCTAssertEqual(HARImportAssertions.decodedText(page.responseBody, headers: page.responseHeaders),
                       "<!doctype html><title>Example</title><p>Hi")
        XCTAssertNotEqual(Array(page.responseBody.bytes.prefix(5)), Array("<!doc".utf8), "stored br-encoded, as sent")
        XCTAssertFalse(page.responseBody.truncated)
        XCTAssertEqual(page.serverAddress, "93.184.215.14")
        XCTAssertEqual(page.clientAddress, "", "Chrome's connection is a port, not an address")
        XCTAssertEqual(page.timings.dns, 20.5)
        XCTAssertEqual(page.timings.tls, 40.2)
        XCTAssertEqual(page.timings.connect, 35.6, accuracy: 0.0001, "HAR connect includes ssl")
        XCTAssertEqual(page.timings.send, 0.3)
        XCTAssertEqual(page.timings.wait, 98.6)
        XCTAssertEqual(page.timings.hold, -1, "Chrome's blocked is queueing, not a hold at a breakpoint")
        XCTAssertEqual(page.timings.receive, 17.3)
        XCTAssertNil(page.note)

        let image = flows[1]
        XCTAssertEqual(image.httpVersion, "HTTP/3.0")
        XCTAssertEqual(image.responseBody.bytes, Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
        XCTAssertEqual(image.responseBody.size, 8)
        XCTAssertEqual(image.serverAddress, "2606:2800:21f:cb07:6820:80da:af6b:8b2c")
        XCTAssertEqual(image.timings.connect, -1)
        XCTAssertEqual(image.timings.tls, -1)

        let post = flows[2]
        XCTAssertEqual(post.method, "POST")
        XCTAssertEqual(post.path, "/api/items")
        XCTAssertEqual(String(decoding: post.requestBody.bytes, as: UTF8.self), #"{"name":"pen","count":2}"#)
        XCTAssertEqual(post.requestBody.size, 27, "bodySize as the HAR says")
        XCTAssertEqual(post.status, 201)

        let failed = flows[3]
        XCTAssertNil(failed.status)
        XCTAssertEqual(failed.error, "net::ERR_NAME_NOT_RESOLVED")
        XCTAssertNil(failed.serverAddress)
        XCTAssertEqual(failed.httpVersion, "HTTP/1.1", "an empty httpVersion")
        XCTAssertEqual(failed.responseBody, .empty)
    }

    func testFirefoxHAR() throws {
        let flows = try HARImportAssertions.flows(FirefoxHAR.json)
        XCTAssertEqual(flows.count, 2)

        let page = flows[0]
        XCTAssertEqual(page.startedAt.timeIntervalSince1970, 1_714_642_867.125, accuracy: 0.0005, "+01:00 offset")
        XCTAssertEqual(page.httpVersion, "HTTP/2.0")
        XCTAssertEqual(page.host, "www.mozilla.org")
        XCTAssertEqual(page.port, 443)
        XCTAssertEqual(page.path, "/en-US/")
        XCTAssertEqual(page.reason, "OK")
        XCTAssertEqual(page.responseBody.bytes.prefix(2), Data([0x1F, 0x8B]), "decoded text stored gzip-encoded again")
        XCTAssertEqual(HARImportAssertions.decodedText(page.responseBody, headers: page.responseHeaders),
                       "<!DOCTYPE html>\n<html lang=\"en-US\"><title>Mozilla</title></html>")
        XCTAssertEqual(page.responseBody.size, 77)
        XCTAssertEqual(page.timings.connect, 12)
        XCTAssertEqual(page.timings.tls, 18)
        XCTAssertEqual(page.durationMilliseconds ?? -1, 107, accuracy: 0.001)

        let form = flows[1]
        XCTAssertEqual(String(decoding: form.requestBody.bytes, as: UTF8.self), "email=a+b%40example.com&lang=en",
                       "params without text are form-encoded")
        XCTAssertEqual(form.status, 302)
        XCTAssertEqual(form.responseBody.bytes, Data())
        XCTAssertEqual(form.timings.connect, 0)
        XCTAssertEqual(form.timings.tls, 0)
    }

    func testMitmproxyHAR() throws {
        let flows = try HARImportAssertions.flows(MitmproxyHAR.json)
        XCTAssertEqual(flows.count, 2)

        let gzip = flows[0]
        XCTAssertEqual(gzip.startedAt.timeIntervalSince1970, 1_714_642_867.123456, accuracy: 0.000_001)
        XCTAssertEqual(gzip.url, "http://httpbin.org/gzip")
        XCTAssertEqual(gzip.serverAddress, "54.204.39.132")
        XCTAssertEqual(gzip.timings.connect, 20.5, "ssl -1: connect is TCP alone")
        XCTAssertEqual(gzip.timings.tls, -1)
        XCTAssertEqual(gzip.timings.dns, -1, "absent phase")
        XCTAssertEqual(gzip.responseBody.bytes.prefix(2), Data([0x1F, 0x8B]))
        XCTAssertEqual(HARImportAssertions.decodedText(gzip.responseBody, headers: gzip.responseHeaders),
                       "{\n  \"gzipped\": true,\n  \"method\": \"GET\"\n}")
        XCTAssertEqual(gzip.responseBody.size, 79)

        let put = flows[1]
        XCTAssertEqual(put.port, 8443)
        XCTAssertEqual(put.scheme, "https")
        XCTAssertEqual(put.requestBody.bytes, Data([0, 1, 2, 3]))
        XCTAssertEqual(put.responseBody.bytes, Data([0xFF, 0x00, 0xFE, 0x01, 0xFD]))
        XCTAssertEqual(put.timings.connect, 10)
        XCTAssertEqual(put.timings.tls, 25)
    }

    func testCharlesHAR() throws {
        let flows = try HARImportAssertions.flows(CharlesHAR.json)
        XCTAssertEqual(flows.count, 2)

        let health = flows[0]
        XCTAssertEqual(health.startedAt.timeIntervalSince1970, 1_714_642_867.5, accuracy: 0.0005)
        XCTAssertEqual(health.host, "localhost")
        XCTAssertEqual(health.port, 3000)
        XCTAssertEqual(String(decoding: health.responseBody.bytes, as: UTF8.self), #"{"status":"ok"}"#)
        XCTAssertNil(health.error, "an empty comment on a completed exchange is no error")
        XCTAssertEqual(health.timings.connect, 2)

        let refused = flows[1]
        XCTAssertNil(refused.status)
        XCTAssertNil(refused.reason)
        XCTAssertEqual(refused.error, "Connection refused")
        XCTAssertEqual(refused.responseBody, .empty)
        XCTAssertEqual(refused.timings.send, -1)
    }
}
