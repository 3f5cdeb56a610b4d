import NIOCore
import NIOEmbedded
import XCTest

@testable import ProxyEngine

/// The read pacer on virtual time: bytes come out in order and complete, at the rate, reads stop
/// while a window's worth waits, an end of input waits for the bytes before it, a reset drops
/// them, and without a rate nothing is held.
final class ThrottledReadsTests: XCTestCase {
    /// Counts the `read()` calls that reach the socket (it sits in front of the pacer).
    private final class ReadCounter: ChannelOutboundHandler {
        typealias OutboundIn = Any
        var reads = 0
        func read(context: ChannelHandlerContext) {
            reads += 1
            context.read()
        }
    }

    /// Collects what the pacer lets through, and the events after it.
    private final class Sink: ChannelInboundHandler {
        typealias InboundIn = ByteBuffer
        var bytes: [UInt8] = []
        var events: [String] = []
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            bytes += unwrapInboundIn(data).readableBytesView
        }
        func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
            if case ChannelEvent.inputClosed = event { events.append("inputClosed") }
        }
    }

    private func makeChannel(rate: Int?, closesOnEndOfInput: Bool = false) throws -> (EmbeddedChannel, ReadCounter, Sink) {
        let channel = EmbeddedChannel()
        let counter = ReadCounter()
        let sink = Sink()
        try channel.pipeline.syncOperations.addHandler(counter)
        try channel.pipeline.syncOperations.addHandler(ThrottledReads(bytesPerSecond: rate, closesOnEndOfInput: closesOnEndOfInput,
                                                                      now: channel.eventLoop.now))
        try channel.pipeline.syncOperations.addHandler(sink)
        return (channel, counter, sink)
    }

    private func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 / 251) } }

    func testBytesPassAtTheRateInOrderAndComplete() throws {
        let (channel, _, sink) = try makeChannel(rate: 20_000)  // capacity 1,460 bytes
        let input = pattern(30_000)
        try channel.writeInbound(ByteBuffer(bytes: input))
        XCTAssertEqual(sink.bytes.count, 1_460, "one burst at once")
        channel.embeddedEventLoop.advanceTime(by: .milliseconds(500))
        // Half a second of the rate later, give or take the one burst being waited for.
        XCTAssertTrue((1_460 + 10_000 - 1_460...1_460 + 10_000).contains(sink.bytes.count), "\(sink.bytes.count)")
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        XCTAssertEqual(sink.bytes.count, 30_000)
        XCTAssertEqual(sink.bytes, input, "in order, nothing lost or repeated")
        XCTAssertNoThrow(try channel.finish())
    }

    func testReadsStopWhileAWindowWaits() throws {
        let (channel, counter, sink) = try makeChannel(rate: 10_000)
        channel.read()
        XCTAssertEqual(counter.reads, 1)
        try channel.writeInbound(ByteBuffer(bytes: pattern(100_000)))  // over the 64 KiB window
        channel.read()
        channel.read()
        XCTAssertEqual(counter.reads, 1, "no read reaches the socket while a window's worth waits")
        channel.embeddedEventLoop.advanceTime(by: .seconds(4))  // 40,000 more through: under the window again
        XCTAssertEqual(counter.reads, 2, "the read asked for meanwhile goes out once there is room")
        channel.embeddedEventLoop.advanceTime(by: .seconds(10))
        XCTAssertEqual(sink.bytes.count, 100_000)
        XCTAssertNoThrow(try channel.finish())
    }

    func testAnEndOfInputWaitsForTheBytesBeforeIt() throws {
        let (channel, _, sink) = try makeChannel(rate: 10_000)
        try channel.writeInbound(ByteBuffer(bytes: pattern(5_000)))
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        XCTAssertEqual(sink.events, [])
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        XCTAssertEqual(sink.bytes.count, 5_000)
        XCTAssertEqual(sink.events, ["inputClosed"])
        XCTAssertNoThrow(try channel.finish())
    }

    func testAConnectionThatClosesAtItsEndClosesAfterItsBytes() throws {
        let (channel, _, sink) = try makeChannel(rate: 10_000, closesOnEndOfInput: true)
        try channel.connect(to: SocketAddress(ipAddress: "127.0.0.1", port: 80)).wait()
        try channel.writeInbound(ByteBuffer(bytes: pattern(3_000)))
        channel.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        XCTAssertTrue(channel.isActive)
        channel.embeddedEventLoop.advanceTime(by: .seconds(1))
        XCTAssertEqual(sink.bytes.count, 3_000)
        XCTAssertFalse(channel.isActive, "closed once the held bytes were through, as NIO would have at the end")
        XCTAssertEqual(sink.events, [], "the close stands for the end of input")
    }

    /// Held bytes are kept right-sized: a large read buffer holding a few bytes is not kept alive.
    func testHeldBytesDoNotKeepLargeReadBuffers() throws {
        let (channel, _, sink) = try makeChannel(rate: 1_000)
        var big = channel.allocator.buffer(capacity: 1 << 20)
        big.writeBytes(pattern(3_000))
        try channel.writeInbound(big)
        XCTAssertEqual(sink.bytes.count, 1_460)
        channel.embeddedEventLoop.advanceTime(by: .seconds(5))
        XCTAssertEqual(sink.bytes, pattern(3_000))
    }

    func testAResetDropsWhatWaitsAndTheTimerStops() throws {
        let (channel, _, sink) = try makeChannel(rate: 1_000)
        try channel.writeInbound(ByteBuffer(bytes: pattern(50_000)))
        XCTAssertEqual(sink.bytes.count, 1_460)
        channel.pipeline.fireChannelInactive()
        channel.embeddedEventLoop.advanceTime(by: .seconds(60))
        XCTAssertEqual(sink.bytes.count, 1_460)
    }

    func testWithoutARateNothingIsHeldAndTheRateMayChange() throws {
        let (channel, counter, sink) = try makeChannel(rate: nil)
        try channel.writeInbound(ByteBuffer(bytes: pattern(200_000)))
        XCTAssertEqual(sink.bytes.count, 200_000)
        channel.read()
        XCTAssertEqual(counter.reads, 1)
        let pacer = try channel.pipeline.syncOperations.handler(type: ThrottledReads.self)
        pacer.setRate(5_000)
        try channel.writeInbound(ByteBuffer(bytes: pattern(20_000)))
        XCTAssertEqual(sink.bytes.count, 200_000 + 1_460)
        pacer.setRate(nil)  // the next request on the connection is not throttled: what waits goes next turn
        XCTAssertEqual(sink.bytes.count, 200_000 + 1_460, "never from inside setRate: its caller is setting up an exchange")
        channel.embeddedEventLoop.run()
        XCTAssertEqual(sink.bytes.count, 220_000)
        XCTAssertNoThrow(try channel.finish())
    }
}
