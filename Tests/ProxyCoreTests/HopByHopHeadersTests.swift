import ProxyCore
import XCTest

/// Which headers a proxy must not forward (RFC 9110 §7.6.1).
final class HopByHopHeadersTests: XCTestCase {
    /// The fixed list is dropped whatever its case; end-to-end headers stay.
    func testFixedListIsDroppedCaseInsensitively() {
        let hop = HopByHopHeaders(connectionValues: [], forwardUpgrade: false)
        for name in ["Connection", "proxy-connection", "Keep-Alive", "TE", "Trailer", "Proxy-Authorization",
                     "Proxy-Authenticate", "Upgrade"] {
            XCTAssertFalse(hop.forwards(name), name)
        }
        for name in ["Host", "Accept", "Authorization", "Content-Length", "Transfer-Encoding", "X-Trace"] {
            XCTAssertTrue(hop.forwards(name), name)
        }
        XCTAssertFalse(hop.keepsUpgrade)
    }

    /// Headers named in Connection are connection-specific too.
    func testConnectionTokensAreDropped() {
        let hop = HopByHopHeaders(connectionValues: ["close, X-Secret-Hop", " x-other ,"], forwardUpgrade: false)
        XCTAssertFalse(hop.forwards("X-Secret-Hop"))
        XCTAssertFalse(hop.forwards("x-secret-hop"))
        XCTAssertFalse(hop.forwards("X-Other"))
        XCTAssertTrue(hop.forwards("X-Kept"))
    }

    /// An upgrade keeps its Upgrade header only when asked and announced in Connection.
    func testUpgradeIsKeptOnlyWhenRequested() {
        let upgrading = HopByHopHeaders(connectionValues: ["Upgrade"], forwardUpgrade: true)
        XCTAssertTrue(upgrading.keepsUpgrade)
        XCTAssertTrue(upgrading.forwards("Upgrade"))
        XCTAssertFalse(upgrading.forwards("Connection"))

        let notAnnounced = HopByHopHeaders(connectionValues: ["keep-alive"], forwardUpgrade: true)
        XCTAssertFalse(notAnnounced.keepsUpgrade)
        XCTAssertFalse(notAnnounced.forwards("Upgrade"))

        let notForwarded = HopByHopHeaders(connectionValues: ["upgrade"], forwardUpgrade: false)
        XCTAssertFalse(notForwarded.keepsUpgrade)
        XCTAssertFalse(notForwarded.forwards("Upgrade"))
    }

    /// A `Connection` token can never remove the message's routing or framing: `Host`,
    /// `Content-Length` and `Transfer-Encoding` in any case are ignored there (request smuggling).
    func testConnectionCannotNameRoutingOrFraming() {
        let hop = HopByHopHeaders(connectionValues: ["Content-Length, HOST", "transfer-ENCODING, X-Gone"],
                                  forwardUpgrade: false)
        for name in ["Host", "host", "Content-Length", "CONTENT-LENGTH", "Transfer-Encoding"] {
            XCTAssertTrue(hop.forwards(name), name)
        }
        XCTAssertFalse(hop.forwards("X-Gone"))
    }
}
