import NIOCore
import NIOEmbedded
import XCTest
@testable import EngineTestSupport
@testable import ProxyEngine

/// The relay between two channels: forwarding, back-pressure, half-close and close.
final class GlueHandlerTests: XCTestCase {
    private func makePair() throws -> (EmbeddedChannel, EmbeddedChannel, ReadCounter, TunnelMeterProbe) {
        let loop = EmbeddedEventLoop()
        let left = EmbeddedChannel(loop: loop)
        let right = EmbeddedChannel(loop: loop)
        let probe = TunnelMeterProbe()
        let (leftGlue, rightGlue) = GlueHandler.matchedPair(meter: probe.meter)
        let leftReads = ReadCounter()
        try left.pipeline.syncOperations.addHandler(leftReads)
        try left.pipeline.syncOperations.addHandler(leftGlue)
        try right.pipeline.syncOperations.addHandler(rightGlue)
        _ = left.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 1))
        _ = right.connect(to: try SocketAddress(ipAddress: "127.0.0.1", port: 2))
        return (left, right, leftReads, probe)
    }

    func testForwardsBothWaysAndCounts() throws {
        let (left, right, _, probe) = try makePair()
        try left.writeInbound(ByteBuffer(string: "abc"))
        XCTAssertEqual(try right.readOutbound(as: ByteBuffer.self), ByteBuffer(string: "abc"))
        try right.writeInbound(ByteBuffer(string: "de"))
        XCTAssertEqual(try left.readOutbound(as: ByteBuffer.self), ByteBuffer(string: "de"))
        try left.close().wait()
        XCTAssertFalse(right.isActive)
        XCTAssertEqual(probe.finished, [3, 2])
    }

    /// Reads on one side wait while the other side cannot take more.
    func testHoldsReadsWhilePartnerIsNotWritable() throws {
        let (left, right, leftReads, _) = try makePair()
        right.isWritable = false
        left.read()
        XCTAssertEqual(leftReads.reads, 0)
        right.isWritable = true
        right.pipeline.fireChannelWritabilityChanged()
        XCTAssertEqual(leftReads.reads, 1)
    }

    /// End of input on one side half-closes the other side's output.
    func testInputClosedBecomesHalfClose() throws {
        let (left, right, _, _) = try makePair()
        let recorder = CloseModeRecorder()
        try right.pipeline.syncOperations.addHandler(recorder, position: .first)
        left.pipeline.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        XCTAssertEqual(recorder.modes, [.output])
    }
}

/// Observes a `TunnelMeter`'s final counts.
final class TunnelMeterProbe {
    private(set) var finished: [Int64] = []
    lazy var meter = TunnelMeter { [unowned self] meter in self.finished = [meter.bytesUp, meter.bytesDown] }
}

/// Records the modes of close() calls passing through.
final class CloseModeRecorder: ChannelOutboundHandler {
    typealias OutboundIn = NIOAny
    private(set) var modes: [CloseMode] = []
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        modes.append(mode)
        promise?.succeed()
    }
}
