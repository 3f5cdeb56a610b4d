import Foundation
import XCTest
@testable import ProxyEngine

/// The CA install page: both downloads, the fingerprint, every platform, and inputs escaped.
final class CertificateInstallPageTests: XCTestCase {
    private let fingerprint = "3A:F0:11:9C:00:DE:AD:BE:EF:01:23:45:67:89:AB:CD:EF:10:32:54:76:98:BA:DC:FE:00:11:22:33:44:55:66"

    /// The page links both formats and shows the fingerprint and the CA's name.
    func testLinksFingerprintAndName() {
        let html = CertificateInstallPage.html(certificateFingerprintSHA256: fingerprint, caName: "ProxyApp CA (host-1)")
        XCTAssertTrue(html.contains(#"href="/ProxyCA.cer""#))
        XCTAssertTrue(html.contains(#"href="/ProxyCA.pem""#))
        XCTAssertTrue(html.contains(fingerprint))
        XCTAssertTrue(html.contains("ProxyApp CA (host-1)"))
        XCTAssertTrue(html.contains("<title>ProxyApp CA</title>"))
        XCTAssertTrue(html.contains(#"name="viewport""#))
        for platform in ["Linux", "macOS", "iOS", "Android", "Windows"] {
            XCTAssertTrue(html.contains("<h2>\(platform)"), "no section for \(platform)")
        }
        XCTAssertTrue(html.contains("ca/install-debian.sh") && html.contains("ca/install-nss.sh"))
    }

    /// Nothing is loaded from elsewhere: the page must render on a device that trusts nothing yet.
    func testNoExternalAssets() throws {
        let tagWithSource = try NSRegularExpression(pattern: "<[a-z]+[^>]*\\ssrc\\s*=", options: [.caseInsensitive])
        for platform in [DevicePlatform.unknown, .iOS, .android, .macOS, .windows, .linux] {
            let html = CertificateInstallPage.html(certificateFingerprintSHA256: fingerprint, caName: "ProxyApp CA",
                                                   platform: platform)
            for marker in ["http://", "https://", "<img", "<iframe", "<script", "<link", "@import", "url("] {
                XCTAssertFalse(html.contains(marker), "\(platform) page contains \(marker)")
            }
            XCTAssertNil(tagWithSource.firstMatch(in: html, range: NSRange(html.startIndex..., in: html)),
                         "\(platform) page has a tag loading something")
        }
    }

    /// Markup in the inputs is shown as text, never interpreted.
    func testInputsAreEscaped() {
        let html = CertificateInstallPage.html(
            certificateFingerprintSHA256: "<b>AA</b>", caName: #"<script>alert("x")</script> & 'co'"#)
        XCTAssertFalse(html.contains("<script>"))
        XCTAssertFalse(html.contains("<b>AA</b>"))
        XCTAssertTrue(html.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;co&#39;"))
        XCTAssertTrue(html.contains("&lt;b&gt;AA&lt;/b&gt;"))
        XCTAssertEqual(CertificateInstallPage.escapeHTML("plain é ✓"), "plain é ✓")
    }
}
