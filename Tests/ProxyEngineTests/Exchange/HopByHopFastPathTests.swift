import NIOHTTP1
import ProxyCore
import SeededRandom
import XCTest
@testable import ProxyEngine

/// The in-place drop of fixed hop-by-hop fields (`hopByHopFields` → `droppingFixedHopByHop`)
/// leaves exactly what the field-by-field filter leaves, on both sides of the exchange: a
/// response head as the client gets it, and a request's headers as they go upstream. Odd
/// spellings of `Connection` values first (each must either mean only `keep-alive`/`close` or
/// send the message down the full filter), then seeded random header lists.
final class HopByHopFastPathTests: XCTestCase {
    private static let connectionValues = [
        "keep-alive", "Keep-Alive", "KEEP-ALIVE", "close", "Close", "keep-alive, close", " keep-alive ,\t", "", ",", " , ",
        "keep-alive\r", "keep-alive\n", "\u{212A}eep-alive", "keep-alivex", "keep alive", "clos", "x-hop", "X-Hop, keep-alive",
        "upgrade", "Upgrade, keep-alive", "host", "content-length", "transfer-encoding", "te", "accept", "keep-alive,x-hop",
        "close,,close", "é", "keep-\u{0}alive",
    ]
    private static let names = ["Connection", "connection", "CONNECTION", "Proxy-Connection", "proxy-connection",
                                "Keep-Alive", "TE", "Trailer", "Upgrade", "Proxy-Authorization", "Proxy-Authenticate",
                                "X-Hop", "x-hop", "Accept", "Cookie", "Content-Type", "Server", "Date"]
    private static let otherValues = ["1", "trailers", "websocket", "a=b", "*/*", "nginx", ""]

    private func pairs(_ headers: HTTPHeaders) -> [String] {
        headers.map { "\($0.name): \($0.value)" }
    }

    /// The response side: `ClientResponseHead` with canonical framing against the filter whole.
    private func assertResponseMatchesFilter(_ headers: HTTPHeaders, switching: Bool,
                                             file: StaticString = #filePath, line: UInt = #line) {
        let plan = ResponseHeadPlan(framing: .init(framing: .none, advertisedLength: nil, isCanonical: true),
                                    close: false, switchingProtocols: switching)
        let shaped = ClientResponseHead(from: HTTPResponseHead(version: .http1_1, status: .ok, headers: headers),
                                        plan: plan, clientVersion: .http1_1).head.headers
        var expected = ExchangeDriver.filtered(
            headers, keeping: HopByHopHeaders(connectionValues: headers["connection"], forwardUpgrade: switching),
            droppingFraming: false)
        if switching { expected.add(name: "Connection", value: "upgrade") }
        XCTAssertEqual(pairs(shaped), pairs(expected), "\(headers)", file: file, line: line)

        // Framing the proxy writes itself: the origin's framing fields go too, its own is added.
        let reframed = ResponseHeadPlan(framing: .init(framing: .contentLength(5), advertisedLength: nil, isCanonical: false),
                                        close: false, switchingProtocols: false)
        var withFraming = headers
        withFraming.add(name: "content-length", value: "05")
        withFraming.add(name: "Transfer-Encoding", value: "chunked")
        let framed = ClientResponseHead(from: HTTPResponseHead(version: .http1_1, status: .ok, headers: withFraming),
                                        plan: reframed, clientVersion: .http1_1).head.headers
        var expectedFramed = ExchangeDriver.filtered(
            withFraming, keeping: HopByHopHeaders(connectionValues: withFraming["connection"], forwardUpgrade: false),
            droppingFraming: true)
        expectedFramed.add(name: "Content-Length", value: "5")
        XCTAssertEqual(pairs(framed), pairs(expectedFramed), "\(withFraming)", file: file, line: line)
    }

    /// The request side: `upstreamHeaders` against `rebuiltUpstreamHeaders`, for a request whose
    /// one `Host` names the target and which carries no framing field.
    private func assertRequestMatchesFilter(_ headers: HTTPHeaders, file: StaticString = #filePath, line: UInt = #line) {
        var request = headers
        request.add(name: "Host", value: "a.test")
        let framing = RequestFraming.Decision(framing: .none, isCanonical: true)
        let fast = ExchangeDriver.upstreamHeaders(from: request, authority: "a.test", framing: framing)
        let whole = ExchangeDriver.rebuiltUpstreamHeaders(from: request, authority: "a.test", framing: framing)
        XCTAssertEqual(pairs(fast.0), pairs(whole.0), "\(request)", file: file, line: line)
        XCTAssertEqual(fast.1, whole.1, "\(request)", file: file, line: line)
    }

    func testPersistenceTokensAreRecognisedExactly() {
        for value in ["keep-alive", "Keep-Alive", "close", "CLOSE", "keep-alive, close", " keep-alive ,\t", "", ",", " , "] {
            XCTAssertTrue(HopByHopHeaders.namesOnlyPersistence(value), value)
        }
        for value in ["keep-alive\r", "\u{212A}eep-alive", "keep-alivex", "keep alive", "clos", "x-hop", "upgrade",
                      "Upgrade, keep-alive", "host", "close, content-length", "é", "keep-\u{0}alive"] {
            XCTAssertFalse(HopByHopHeaders.namesOnlyPersistence(value), value)
        }
    }

    /// Whatever `namesOnlyPersistence` accepts makes `HopByHopHeaders` drop the fixed list and
    /// nothing more, as the fast path assumes.
    func testAcceptedValuesNameNoFieldBeyondTheFixedList() {
        for value in Self.connectionValues where HopByHopHeaders.namesOnlyPersistence(value) {
            let hop = HopByHopHeaders(connectionValues: [value], forwardUpgrade: true)
            XCTAssertFalse(hop.keepsUpgrade, value)
            for name in Self.names + Self.connectionValues + HopByHopHeaders.fixed {
                XCTAssertEqual(hop.forwards(name), HopByHopHeaders.standard.forwards(name), "\(name) after \(value)")
            }
        }
    }

    func testKnownAnswers() {
        XCTAssertEqual(ExchangeDriver.hopByHopFields(HTTPHeaders([("Server", "nginx")])), .none)
        XCTAssertEqual(ExchangeDriver.hopByHopFields(HTTPHeaders([("Connection", "keep-alive"), ("Keep-Alive", "timeout=5")])),
                       .fixedOnly([.connection, .keepAlive]))
        XCTAssertEqual(ExchangeDriver.hopByHopFields(HTTPHeaders([("Proxy-Connection", "Keep-Alive")])),
                       .fixedOnly(.proxyConnection))
        XCTAssertEqual(ExchangeDriver.hopByHopFields(HTTPHeaders([("TE", "trailers"), ("PROXY-AUTHENTICATE", "Basic"),
                                                                  ("upgrade", "h2c"), ("Trailer", "x"), ("te", "")])),
                       .fixedOnly(HopByHopHeaders.FixedNames(rawValue: 0b1011_1000)))
        XCTAssertEqual(ExchangeDriver.hopByHopFields(HTTPHeaders([("Connection", "keep-alive, X-Hop"), ("X-Hop", "1")])),
                       .namedByConnection)
        XCTAssertEqual(ExchangeDriver.hopByHopFields(HTTPHeaders([("Proxy-Connection", "x-hop")])), .namedByConnection)
        let headers = HTTPHeaders([
            ("Date", "d"), ("connection", "keep-alive"), ("ETag", "e"), ("KEEP-ALIVE", "timeout=5"), ("Connection", "close"),
            ("Proxy-Authenticate", "Basic"), ("X-Hop", "kept: nothing named it"),
        ])
        guard case .fixedOnly(let found) = ExchangeDriver.hopByHopFields(headers) else { return XCTFail("not fixed only") }
        var names: [String] = []
        found.forEachName { names.append($0) }
        XCTAssertEqual(names, ["connection", "keep-alive", "proxy-authenticate"])
        let dropped = ExchangeDriver.droppingFixedHopByHop(headers, found)
        XCTAssertEqual(pairs(dropped), ["Date: d", "ETag: e", "X-Hop: kept: nothing named it"])
    }

    /// Every fixed name in any ASCII case is found at its own position, and nothing else is:
    /// the names one letter off, one byte longer or shorter, or spelled with a Unicode look-alike.
    func testFixedNamesAreFoundAtTheirPositions() {
        for (index, name) in HopByHopHeaders.fixed.enumerated() {
            for spelling in [name, name.uppercased(), name.capitalized] {
                XCTAssertEqual(HopByHopHeaders.fixedIndex(of: spelling), index, spelling)
            }
            for other in [name + "s", String(name.dropLast()), "x" + name.dropFirst(), name.replacingOccurrences(of: "k", with: "\u{212A}")]
                where other.lowercased() != name {
                XCTAssertNil(HopByHopHeaders.fixedIndex(of: other), other)
            }
        }
        for name in ["Host", "Content-Length", "Transfer-Encoding", "X-Hop", "", "connectio\u{0}"] {
            XCTAssertNil(HopByHopHeaders.fixedIndex(of: name), name)
        }
    }

    func testOddConnectionValuesShapeAsTheFilter() {
        for value in Self.connectionValues {
            for name in ["Connection", "Proxy-Connection"] {
                let headers = HTTPHeaders([("Server", "nginx"), (name, value), ("X-Hop", "1"), ("Keep-Alive", "timeout=5"),
                                           ("Accept", "*/*"), ("connection", "keep-alive")])
                assertResponseMatchesFilter(headers, switching: false)
                assertResponseMatchesFilter(headers, switching: true)
                assertRequestMatchesFilter(headers)
            }
        }
    }

    func testSeededRandomHeadersShapeAsTheFilter() {
        var random = SeededRandom(seed: 21)
        func pick(_ list: [String]) -> String { list[Int(random.next() % UInt64(list.count))] }
        for _ in 0..<3_000 {
            var fields: [(String, String)] = []
            for _ in 0..<Int(random.next() % 6) {
                let name = pick(Self.names)
                let isConnection = name.lowercased().hasSuffix("connection")
                fields.append((name, isConnection || random.next() % 4 == 0 ? pick(Self.connectionValues) : pick(Self.otherValues)))
            }
            let headers = HTTPHeaders(fields)
            assertResponseMatchesFilter(headers, switching: random.next() % 2 == 0)
            assertRequestMatchesFilter(headers)
        }
    }
}
