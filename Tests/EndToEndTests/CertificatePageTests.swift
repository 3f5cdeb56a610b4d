import Foundation
import XCTest

/// The CA download pages at `proxyapp.cert`, attacked: any spelling of the name, methods other
/// than GET and HEAD, caching, and the page reached through a CONNECT (HTTPS intercepted with a
/// leaf for the name, plain HTTP in a tunnel) without a DNS lookup or a pin.
final class CertificatePageTests: XCTestCase {
    /// Was a DNS lookup and a 502: `PROXYAPP.CERT.` (any case, the DNS root's dot) is the
    /// proxy's own host. Every answer says `Cache-Control: no-store`.
    /// The page knows the device: an iPhone gets the profile and its full-trust step first, an
    /// Android phone the `.crt` and the network security config; both downloads are the CA.
    func testPageAndDownloadsForTheDevice() async throws {
        try await InterceptingFixture.run(servesCA: true) { fixture in
            let url = "http://127.0.0.1:\(fixture.proxy.port)/"
            let iPhone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_1 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148 Safari/604.1"
            let android = "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/119.0.0.0 Mobile Safari/537.36"
            let iOSPage = try await Curl.run(["-A", iPhone, url]).stdoutText
            XCTAssertTrue(iOSPage.contains("On this iPhone or iPad"), iOSPage)
            let iOSOrder = ["ProxyCA.mobileconfig</a>", "ProxyCA.cer</a>", "<h2>iOS, iPadOS</h2>", "full trust",
                            "Other devices", "<h2>Android</h2>"].map { iOSPage.range(of: $0)?.lowerBound }
            XCTAssertFalse(iOSOrder.contains(nil), "\(iOSOrder)")
            XCTAssertEqual(iOSOrder.compactMap { $0 }, iOSOrder.compactMap { $0 }.sorted(), "the iPhone's steps first")
            let androidPage = try await Curl.run(["-A", android, url]).stdoutText
            XCTAssertTrue(androidPage.contains("On this Android"), androidPage)
            XCTAssertTrue(androidPage.contains("&lt;certificates src=\"user\" /&gt;"), androidPage)
            XCTAssertLessThan(try XCTUnwrap(androidPage.range(of: "<h2>Android</h2>")).lowerBound,
                              try XCTUnwrap(androidPage.range(of: "<h2>Linux</h2>")).lowerBound)
            let plain = try await Curl.run(["-A", "curl/7.88.1", url]).stdoutText
            XCTAssertFalse(plain.contains("On this"), "an unknown device gets every platform, none first")

            let crt = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://proxyapp.cert/ProxyCA.crt")
            XCTAssertEqual(crt.status, 200)
            XCTAssertEqual(Array(crt.body), fixture.tls.proxyCA.certificateDER)
            XCTAssertEqual(crt.header("Content-Disposition"), "attachment; filename=\"ProxyCA.crt\"")
            let profile = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://proxyapp.cert/ProxyCA.mobileconfig")
            XCTAssertEqual(profile.status, 200)
            XCTAssertEqual(profile.header("Content-Type"), "application/x-apple-aspen-config")
            let plist = try PropertyListSerialization.propertyList(from: profile.body, format: nil) as? [String: Any]
            let payload = (plist?["PayloadContent"] as? [[String: Any]])?.first
            XCTAssertEqual(payload?["PayloadContent"] as? Data, Data(fixture.tls.proxyCA.certificateDER))
        }
    }

    func testAnySpellingOfTheNameIsServedAndNotCached() async throws {
        try await InterceptingFixture.run(servesCA: true) { fixture in
            let client = try RawClient(port: fixture.proxy.port)
            for host in ["PROXYAPP.CERT.", "ProxyApp.Cert", "proxyapp.cert:80"] {
                try client.send("GET http://\(host)/ProxyCA.pem HTTP/1.1\r\nHost: \(host)\r\n\r\n")
                let response = try client.readResponse()
                XCTAssertEqual(response.status, 200, host)
                XCTAssertEqual(response.bodyText, fixture.tls.proxyCA.certificatePEM, host)
                XCTAssertEqual(response.header("Cache-Control"), "no-store", host)
            }
            try client.send("GET http://proxyapp.cert/nothing HTTP/1.1\r\nHost: proxyapp.cert\r\n\r\n")
            let missing = try client.readResponse()
            XCTAssertEqual(missing.status, 404)
            XCTAssertEqual(missing.header("Cache-Control"), "no-store")
        }
    }

    /// Only GET and HEAD: anything else is 405 with `Allow`, its body is read and dropped, and
    /// the connection goes on. HEAD has GET's headers and no body.
    func testOnlyGetAndHeadAreAnswered() async throws {
        try await InterceptingFixture.run(servesCA: true) { fixture in
            let client = try RawClient(port: fixture.proxy.port)
            for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "PURGE"] {
                try client.send("\(method) http://proxyapp.cert/ HTTP/1.1\r\nHost: proxyapp.cert\r\n"
                                + "Content-Length: 5\r\n\r\nhello")
                let response = try client.readResponse()
                XCTAssertEqual(response.status, 405, method)
                XCTAssertEqual(response.header("Allow"), "GET, HEAD", method)
                XCTAssertEqual(response.header("Cache-Control"), "no-store", method)
            }
            try client.send("HEAD http://proxyapp.cert/ProxyCA.pem HTTP/1.1\r\nHost: proxyapp.cert\r\n\r\n")
            let head = try client.readResponse(noBody: true)
            XCTAssertEqual(head.status, 200)
            XCTAssertEqual(head.header("Content-Length"), String(fixture.tls.proxyCA.certificatePEM.utf8.count))
            // Nothing followed the head: the next response on the connection is the next request's.
            try client.send("GET http://proxyapp.cert/ProxyCA.cer HTTP/1.1\r\nHost: proxyapp.cert\r\n\r\n")
            let next = try client.readResponse()
            XCTAssertEqual(next.status, 200)
            XCTAssertEqual([UInt8](next.body), fixture.tls.proxyCA.certificateDER)
            XCTAssertEqual(fixture.origin.log.requests.count, 0)
        }
    }

    /// `https://proxyapp.cert/` through a CONNECT: intercepted with a leaf minted for the name
    /// (which a client trusting the CA verifies), the page served, nothing dialled.
    func testHTTPSPageThroughConnect() async throws {
        try await InterceptingFixture.run(servesCA: true) { fixture in
            let fetched = try await Curl.fetch(viaProxy: fixture.proxy.port, "https://proxyapp.cert/ProxyCA.pem",
                                               ["--cacert", fixture.tls.proxyCAFile.path])
            XCTAssertEqual(fetched.result.exitCode, 0, fetched.result.summary)
            XCTAssertEqual(fetched.status, 200)
            XCTAssertEqual(fetched.bodyText, fixture.tls.proxyCA.certificatePEM)
            XCTAssertEqual(fetched.header("Cache-Control"), "no-store")
        }
    }

    /// Plain HTTP inside `CONNECT proxyapp.cert:80` is answered too.
    func testPlainHTTPPageThroughConnect() async throws {
        try await InterceptingFixture.run(servesCA: true) { fixture in
            let fetched = try await Curl.fetch(viaProxy: fixture.proxy.port, "http://proxyapp.cert/", ["--proxytunnel"])
            XCTAssertEqual(fetched.result.exitCode, 0, fetched.result.summary)
            XCTAssertEqual(fetched.status, 200)
            XCTAssertTrue(fetched.bodyText.contains(fixture.tls.proxyCA.sha256Fingerprint))
        }
    }

    /// `http://proxyapp.cert/` asked in absolute form inside a tunnel to another host is the
    /// proxy's page too, as it is outside one (it was dialled: a DNS lookup and a 502).
    func testAbsoluteFormPageInsideAnotherTunnel() async throws {
        try await InterceptingFixture.run(servesCA: true) { fixture in
            let client = try RawClient(port: fixture.proxy.port)
            let target = "127.0.0.1:\(fixture.origin.port)"
            try client.send("CONNECT \(target) HTTP/1.1\r\nHost: \(target)\r\n\r\n")
            XCTAssertEqual(try client.readResponse(noBody: true).status, 200)
            try client.send("GET http://PROXYAPP.CERT./ProxyCA.pem HTTP/1.1\r\nHost: \(target)\r\n\r\n")
            let response = try client.readResponse()
            XCTAssertEqual(response.status, 200, response.bodyText)
            XCTAssertEqual(response.bodyText, fixture.tls.proxyCA.certificatePEM)
            XCTAssertEqual(fixture.origin.log.requests.count, 0)
        }
    }

    /// A device that does not trust the CA yet refuses the page's certificate: that must not pin
    /// `proxyapp.cert` (the next visit, once trusted, would otherwise go nowhere).
    func testRejectingThePageNeverPinsIt() async throws {
        try await InterceptingFixture.run(pinLimits: .init(), servesCA: true) { fixture in
            let rejected = try await Curl.viaProxy(fixture.proxy.port, ["--cacert", fixture.tls.originCAFile.path,
                                                                        "https://proxyapp.cert/"])
            XCTAssertNotEqual(rejected.exitCode, 0)
            _ = try await fixture.proxy.waitForFlows(count: 1)
            XCTAssertNil(fixture.pins?.pins(for: "proxyapp.cert").first)
            let trusted = try await Curl.fetch(viaProxy: fixture.proxy.port, "https://proxyapp.cert/",
                                               ["--cacert", fixture.tls.proxyCAFile.path])
            XCTAssertEqual(trusted.status, 200)
        }
    }

    /// Bytes that are neither TLS nor HTTP to `proxyapp.cert` are refused (there is nothing to
    /// relay them to), recorded with a reason.
    func testOpaqueBytesToThePageHostAreRefused() async throws {
        try await InterceptingFixture.run(servesCA: true) { fixture in
            let client = try RawClient(port: fixture.proxy.port)
            try client.send("CONNECT proxyapp.cert:443 HTTP/1.1\r\nHost: proxyapp.cert\r\n\r\n")
            XCTAssertEqual(try client.readResponse(noBody: true).status, 200)
            try client.send("\u{1}binary")
            XCTAssertTrue(try client.readUntilClose(timeout: 10))
            let flow = try await fixture.proxy.waitForFlows(count: 1).last
            XCTAssertEqual(flow?.error, "proxyapp.cert is the proxy's own: it answers HTTP and HTTPS only")
        }
    }

    /// Without interception there is no tunnel to serve the pages in: the CONNECT is refused
    /// with the way to get them.
    func testConnectToThePageWithoutInterceptionIsRefusedWithAHint() async throws {
        try await Fixture.run { proxy, _ in
            let client = try RawClient(port: proxy.port)
            try client.send("CONNECT proxyapp.cert:443 HTTP/1.1\r\nHost: proxyapp.cert\r\n\r\n")
            let response = try client.readResponse(noBody: true)
            XCTAssertEqual(response.status, 501)
            let flow = try await proxy.waitForFlows(count: 1).last
            XCTAssertEqual(flow?.error, "HTTPS interception is off: open http://proxyapp.cert/ through the proxy without CONNECT")
        }
    }
}
