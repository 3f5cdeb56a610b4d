import ProxyCore
import XCTest

/// `Sec-WebSocket-Extensions` in a 101 response: what permessage-deflate was agreed, and which
/// answers a client must refuse (RFC 7692 §7.1).
final class WebSocketDeflateParametersTests: XCTestCase {
    private typealias Parameters = WebSocketDeflateParameters

    private func negotiated(_ value: String?) -> Parameters.Negotiation {
        Parameters.negotiated(fromResponseHeader: value)
    }

    func testNoExtension() {
        XCTAssertEqual(negotiated(nil), .none)
        XCTAssertEqual(negotiated(""), .none)
        XCTAssertEqual(negotiated("x-webkit-deflate-frame; no_context_takeover"), .none)
    }

    func testDefaults() {
        XCTAssertEqual(negotiated("permessage-deflate"), .permessageDeflate(Parameters()))
        let parameters = Parameters()
        XCTAssertTrue(parameters.contextTakeover(for: .clientToServer))
        XCTAssertTrue(parameters.contextTakeover(for: .serverToClient))
        XCTAssertEqual(parameters.windowBits(for: .serverToClient), 15)
    }

    func testEveryParameter() {
        let value = "permessage-deflate; server_no_context_takeover;client_max_window_bits=10 ;server_max_window_bits=\"12\""
        let expected = Parameters(serverNoContextTakeover: true, serverMaxWindowBits: 12, clientMaxWindowBits: 10)
        XCTAssertEqual(negotiated(value), .permessageDeflate(expected))
        XCTAssertFalse(expected.contextTakeover(for: .serverToClient))
        XCTAssertTrue(expected.contextTakeover(for: .clientToServer))
        XCTAssertEqual(expected.windowBits(for: .clientToServer), 10)
        XCTAssertEqual(expected.windowBits(for: .serverToClient), 12)
        XCTAssertEqual(negotiated("PerMessage-Deflate; Client_No_Context_Takeover"),
                       .permessageDeflate(Parameters(clientNoContextTakeover: true)))
    }

    func testAmongOtherExtensions() {
        XCTAssertEqual(negotiated("foo; bar=\"a,b;c\", permessage-deflate; client_no_context_takeover, baz"),
                       .permessageDeflate(Parameters(clientNoContextTakeover: true)))
    }

    func testRefusedAnswers() {
        for value in [
            "permessage-deflate, permessage-deflate",
            "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
            "permessage-deflate; server_no_context_takeover=1",
            "permessage-deflate; client_max_window_bits",
            "permessage-deflate; server_max_window_bits=16",
            "permessage-deflate; server_max_window_bits=7",
            "permessage-deflate; server_max_window_bits=010",
            "permessage-deflate; server_max_window_bits=x",
            "permessage-deflate; mystery",
            "permessage-deflate; =5",
        ] {
            guard case .malformed(let reason) = negotiated(value) else {
                XCTFail("\(value) must be refused, got \(negotiated(value))")
                continue
            }
            XCTAssertFalse(reason.isEmpty)
        }
    }
}
