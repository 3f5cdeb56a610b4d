import NIOCore
import NIOEmbedded
import NIOHTTP2
import XCTest
@testable import ProxyEngine

/// An HTTP/2 client connection closes (GOAWAY first) once no stream has been open for the idle
/// timeout, and never while a stream is open, however long it runs.
final class HTTP2IdleConnectionCloserTests: XCTestCase {
    private func makeChannel() throws -> (EmbeddedChannel, ClientTLSState) {
        let state = ClientTLSState(serverName: "a.test")
        let channel = EmbeddedChannel()
        _ = channel.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1))
        try channel.pipeline.syncOperations.addHandler(HTTP2IdleConnectionCloser(timeout: .seconds(5), tls: state))
        return (channel, state)
    }

    private func streamCreated(_ id: Int, on channel: EmbeddedChannel) {
        channel.pipeline.fireUserInboundEventTriggered(NIOHTTP2StreamCreatedEvent(
            streamID: HTTP2StreamID(id), localInitialWindowSize: nil, remoteInitialWindowSize: nil))
    }

    private func streamClosed(_ id: Int, on channel: EmbeddedChannel) {
        channel.pipeline.fireUserInboundEventTriggered(StreamClosedEvent(streamID: HTTP2StreamID(id), reason: nil))
    }

    private func assertGoAway(_ channel: EmbeddedChannel, lastStream: Int, file: StaticString = #filePath, line: UInt = #line) throws {
        guard let frame = try channel.readOutbound(as: HTTP2Frame.self) else {
            return XCTFail("no GOAWAY written", file: file, line: line)
        }
        guard case .goAway(let last, let code, _) = frame.payload else {
            return XCTFail("wrote \(frame.payload), not a GOAWAY", file: file, line: line)
        }
        XCTAssertEqual(last, HTTP2StreamID(lastStream), file: file, line: line)
        XCTAssertEqual(code, .noError, file: file, line: line)
    }

    func testAConnectionThatNeverOpensAStreamClosesAfterTheTimeout() throws {
        let (channel, state) = try makeChannel()
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        XCTAssertTrue(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        try assertGoAway(channel, lastStream: 0)
        XCTAssertFalse(channel.isActive)
        XCTAssertTrue(state.closeRequested, "a close the proxy started")
    }

    func testAnOpenStreamKeepsTheConnectionThenTheTimeoutCountsFromItsClose() throws {
        let (channel, _) = try makeChannel()
        streamCreated(1, on: channel)
        streamCreated(3, on: channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(30))
        XCTAssertTrue(channel.isActive, "streams open: never idle")
        streamClosed(1, on: channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(30))
        XCTAssertTrue(channel.isActive, "one stream still open")
        XCTAssertNil(try channel.readOutbound(as: HTTP2Frame.self))
        streamClosed(3, on: channel)
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))
        XCTAssertTrue(channel.isActive, "idle for 4 s of 5")
        channel.embeddedEventLoop.advanceTime(by: .seconds(2))
        try assertGoAway(channel, lastStream: 3)
        XCTAssertFalse(channel.isActive)
    }

    func testAClientThatEndedItsSideIsClosedOnceItsLastStreamIsOver() throws {
        let (channel, state) = try makeChannel()
        streamCreated(1, on: channel)
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        XCTAssertTrue(channel.isActive, "stream 1 is still being answered")
        streamClosed(1, on: channel)
        XCTAssertFalse(channel.isActive)
        XCTAssertTrue(state.closeRequested)
    }

    func testAClientThatEndsItsSideWithNoStreamOpenIsClosedAtOnce() throws {
        let (channel, _) = try makeChannel()
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        XCTAssertFalse(channel.isActive)
    }
}
