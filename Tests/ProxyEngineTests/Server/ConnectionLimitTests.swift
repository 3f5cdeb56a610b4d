import Dispatch
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOEmbedded
import NIOHTTP1
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// `--max-connections`: one slot per accepted connection, given back exactly once however the
/// connection ends; the connection after the last slot gets a 503 and is closed, unread.
final class ConnectionLimitTests: XCTestCase {
    private let loop = EmbeddedEventLoop()

    private func services(maxConnections: Int) -> ProxyServices {
        var configuration = ProxyConfiguration()
        configuration.maxConnections = maxConnections
        return ProxyServices(configuration: configuration, sink: CollectingSink(), connector: FakeConnector(loop: loop),
                             blockingWork: InlineWork(), logger: Logger(label: "test"))
    }

    /// A connection as the listener hands it over: pipeline configured, then active.
    private func accept(_ services: ProxyServices) throws -> EmbeddedChannel {
        let channel = EmbeddedChannel(loop: loop)
        try ClientPipelineSetup.configureAccepted(channel, services: services)
        _ = channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 8080))
        loop.run()
        return channel
    }

    /// Closes like the proxy does; an embedded channel completes its close future on the next
    /// loop tick. Closing a closed channel is allowed (and must give nothing back).
    private func close(_ channel: EmbeddedChannel) {
        try? channel.close().wait()
        loop.run()
    }

    func testSlotsAreTakenUpToTheLimitAndGivenBackOnClose() throws {
        let services = services(maxConnections: 2)
        let limit = services.connectionLimit
        let first = try accept(services)
        let second = try accept(services)
        XCTAssertEqual(limit.current, 2)
        XCTAssertTrue(first.isActive && second.isActive)

        let refused = try accept(services)
        XCTAssertFalse(refused.isActive, "the connection over the limit is closed")
        XCTAssertEqual(limit.current, 2, "a refused connection holds no slot")

        close(first)
        XCTAssertEqual(limit.current, 1)
        let third = try accept(services)
        XCTAssertTrue(third.isActive, "a slot freed by a close is used again")
        XCTAssertEqual(limit.current, 2)
        close(second)
        close(third)
        XCTAssertEqual(limit.current, 0)
    }

    /// Every way a connection ends gives its slot back once: the client closing, a reset
    /// (error), the idle timeout, the proxy closing twice, a close after the HTTP handlers left,
    /// and a pipeline that could not be built.
    func testEachEndReleasesExactlyOnce() throws {
        let services = services(maxConnections: 10)
        let limit = services.connectionLimit

        let remoteClose = try accept(services)
        remoteClose.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)  // the client's FIN
        loop.run()
        XCTAssertFalse(remoteClose.isActive)
        XCTAssertEqual(limit.current, 0)

        let reset = try accept(services)
        reset.pipeline.fireErrorCaught(IOError(errnoCode: ECONNRESET, reason: "read"))
        loop.run()
        XCTAssertFalse(reset.isActive)
        XCTAssertEqual(limit.current, 0)

        let idle = try accept(services)
        loop.advanceTime(by: ProxyConfiguration().clientIdleTimeout + .seconds(1))
        XCTAssertFalse(idle.isActive, "the idle timeout closes it")
        XCTAssertEqual(limit.current, 0)

        let twice = try accept(services)
        close(twice)
        close(twice)
        XCTAssertEqual(limit.current, 0, "a second close gives nothing back again")

        let swapped = try accept(services)
        while let handler = try? swapped.pipeline.syncOperations.handler(type: ClientHTTPHandler.self) {
            try swapped.pipeline.syncOperations.removeHandler(handler).wait()
        }
        XCTAssertEqual(limit.current, 1, "removing handlers does not end the connection")
        close(swapped)
        XCTAssertEqual(limit.current, 0)

        // The HTTP handlers cannot be added (the client is already gone): the setup fails, as
        // NIO then closes the channel, and the slot is not kept.
        let gone = EmbeddedChannel(loop: loop)
        close(gone)
        XCTAssertThrowsError(try ClientPipelineSetup.configureAccepted(gone, services: services))
        XCTAssertEqual(limit.current, 0)

        // Many connections, closed in every order: the count returns to zero and never below.
        var channels = try (0..<10).map { _ in try accept(services) }
        XCTAssertEqual(limit.current, 10)
        XCTAssertFalse(try accept(services).isActive)
        channels.shuffle()
        for channel in channels {
            close(channel)
            close(channel)
        }
        XCTAssertEqual(limit.current, 0)
    }

    /// The 503 itself: status, RFC 9209 reason, the limit and the flag in words, `Connection:
    /// close`, and nothing of the request read (the client's bytes go nowhere).
    func testRefusalIsA503NamingTheLimitAndTheFlag() throws {
        let services = services(maxConnections: 1)
        let held = try accept(services)
        let refused = EmbeddedChannel(loop: loop)
        try ClientPipelineSetup.configureAccepted(refused, services: services)
        XCTAssertNil(try? refused.pipeline.syncOperations.handler(type: ClientHTTPHandler.self),
                     "a refused connection gets no HTTP handlers")
        _ = refused.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 8080))
        loop.run()

        var written = ""
        while let buffer = try refused.readOutbound(as: ByteBuffer.self) {
            written += String(buffer: buffer)
        }
        XCTAssertFalse(refused.isActive)
        let body = "ProxyApp is serving its limit of 1 connections (--max-connections); try again shortly.\n"
        XCTAssertEqual(written, """
            HTTP/1.1 503 Service Unavailable\r
            Proxy-Status: ProxyApp; error=connection_limit_reached; details="client connections at the limit of 1 (--max-connections)"\r
            Retry-After: 1\r
            Content-Type: text/plain; charset=utf-8\r
            Content-Length: \(body.utf8.count)\r
            Connection: close\r
            \r
            \(body)
            """)

        // What a client sends before the close is dropped, not parsed or answered again.
        let late = EmbeddedChannel(handler: ConnectionLimitRefusalHandler(response: services.connectionLimit.refusal), loop: loop)
        try late.writeInbound(ByteBuffer(string: "GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n"))
        XCTAssertNil(try late.readInbound(as: ByteBuffer.self))
        _ = late.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 8080))
        loop.run()
        XCTAssertNotNil(try late.readOutbound(as: ByteBuffer.self))
        XCTAssertNil(try late.readOutbound(as: ByteBuffer.self), "answered once")
        XCTAssertFalse(late.isActive)
        close(held)
    }

    /// The answer parses as HTTP for a strict client decoder, body length included.
    func testRefusalParsesAsOneHTTPResponse() throws {
        let decoder = EmbeddedChannel(loop: loop)
        try decoder.pipeline.syncOperations.addHTTPClientHandlers()
        // The decoder needs the request it answers.
        try decoder.writeOutbound(HTTPClientRequestPart.head(HTTPRequestHead(version: .http1_1, method: .GET, uri: "/")))
        try decoder.writeOutbound(HTTPClientRequestPart.end(nil))
        try decoder.writeInbound(ByteBuffer(string: ConnectionLimit.refusalResponse(limit: 426)))
        var parts: [HTTPClientResponsePart] = []
        while let part = try decoder.readInbound(as: HTTPClientResponsePart.self) { parts.append(part) }
        guard case .head(let head)? = parts.first, case .body(let body)? = parts.dropFirst().first,
              case .end? = parts.last, parts.count == 3 else {
            return XCTFail("not one response: \(parts)")
        }
        XCTAssertEqual(head.status, .serviceUnavailable)
        XCTAssertEqual(head.headers["Proxy-Status"].first?.contains("error=connection_limit_reached"), true)
        XCTAssertEqual(String(buffer: body), "ProxyApp is serving its limit of 426 connections (--max-connections); try again shortly.\n")
    }

    /// Admissions racing on many threads (the event loops) hand out exactly the limit.
    func testCounterHoldsAcrossThreads() {
        let limit = ConnectionLimit(maximum: 50)
        let admitted = NIOLockedValueBox(0)
        DispatchQueue.concurrentPerform(iterations: 400) { _ in
            if limit.tryAcquire() { admitted.withLockedValue { $0 += 1 } }
        }
        XCTAssertEqual(admitted.withLockedValue { $0 }, 50)
        XCTAssertEqual(limit.current, 50)
        DispatchQueue.concurrentPerform(iterations: 50) { _ in limit.release() }
        XCTAssertEqual(limit.current, 0)
    }
}
