import Foundation
import ProxyModel
import XCTest

@testable import proxyapp

/// The flow lines of `proxyapp flows` and `proxyapp run`: HTTPS URLs, notes and applied rules.
final class FlowTableTests: XCTestCase {
    /// Decrypted HTTPS shows its https URL; plain HTTP keeps showing the path.
    func testHTTPSFlowsShowTheirURL() {
        let https = Flow(id: 7, method: "GET", scheme: "https", host: "api.example.com", port: 443, path: "/v1/items?page=2",
                         status: 200)
        XCTAssertTrue(FlowTable.line(for: https).hasSuffix(" https://api.example.com/v1/items?page=2"),
                      FlowTable.line(for: https))
        let plain = Flow(id: 8, scheme: "http", host: "example.com", port: 80, path: "/index.html", status: 200)
        XCTAssertTrue(FlowTable.line(for: plain).hasSuffix(" /index.html"), FlowTable.line(for: plain))
    }

    /// A tunnel whose TLS handshake failed reads `ERR` and its reason, as in the terminal UI, not
    /// the CONNECT's 200 (issue 14).
    func testFailedTunnelReadsERR() throws {
        // As the engine records it (and as an older capture's 200 reads back): no status, an error.
        let tunnel = Flow(id: 4, kind: .tunnel, method: "CONNECT", scheme: "https", host: "a.test", port: 443, path: "",
                          error: "TLS handshake with the client failed: the client sent unknown_ca")
        let line = FlowTable.line(for: tunnel)
        XCTAssertTrue(line.contains(" CONNECT ERR    a.test "), line)
        XCTAssertTrue(line.hasSuffix(" (tunnel)  ! TLS handshake with the client failed: the client sent unknown_ca"), line)
    }

    /// A flow's note follows the path in brackets, before the error; without one nothing is added.
    func testNoteIsShownAfterThePath() {
        var tunnel = Flow(id: 9, kind: .tunnel, method: "CONNECT", scheme: "https", host: "pinned.example", port: 443,
                          path: "", note: "pinned: client rejected the certificate (unknown_ca alert)")
        XCTAssertTrue(FlowTable.line(for: tunnel)
            .hasSuffix(" (tunnel)  [pinned: client rejected the certificate (unknown_ca alert)]"),
            FlowTable.line(for: tunnel))
        tunnel.error = "connection reset"
        XCTAssertTrue(FlowTable.line(for: tunnel).hasSuffix("(unknown_ca alert)]  ! connection reset"),
                      FlowTable.line(for: tunnel))
        tunnel.note = nil
        XCTAssertTrue(FlowTable.line(for: tunnel).hasSuffix(" (tunnel)  ! connection reset"), FlowTable.line(for: tunnel))
    }

    /// The rules that acted on a flow follow its note, in order, before the error.
    func testAppliedRulesAreShownAfterTheNote() {
        var flow = Flow(id: 10, scheme: "http", host: "ads.example", port: 80, path: "/banner.js", status: 403,
                        note: "blocked", appliedRules: ["Block ads", "staging"])
        XCTAssertTrue(FlowTable.line(for: flow).hasSuffix(" /banner.js  [blocked]  rules: Block ads, staging"),
                      FlowTable.line(for: flow))
        flow.error = "refused"
        XCTAssertTrue(FlowTable.line(for: flow).hasSuffix("  rules: Block ads, staging  ! refused"), FlowTable.line(for: flow))
        flow.appliedRules = []
        XCTAssertTrue(FlowTable.line(for: flow).hasSuffix(" /banner.js  [blocked]  ! refused"), FlowTable.line(for: flow))
    }
}
