import NIOCore
import NIOEmbedded
import NIOSSL
import XCTest

@testable import ProxyEngine

/// The writes of one flush reach the TLS handler as one buffer when they are small together
/// (`TLSWriteCoalescer`), so a head and its body are sealed as one record; order, promises,
/// closes and removal behave as without it.
final class TLSWriteCoalescerTests: XCTestCase {
    /// Stands where the TLS handler would: records each write and flush as it arrives, and fails
    /// write promises with `failure` when set.
    private final class WireRecorder: ChannelOutboundHandler {
        typealias OutboundIn = IOData
        enum Event: Equatable {
            case write(String)
            case fileRegion
            case flush
            case close
        }
        var events: [Event] = []
        var storage: [UnsafeRawPointer?] = []
        var failure: (any Error)?

        func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
            switch unwrapOutboundIn(data) {
            case .byteBuffer(let buffer):
                events.append(.write(String(buffer: buffer)))
                storage.append(buffer.withUnsafeReadableBytes { $0.baseAddress.map(UnsafeRawPointer.init) })
            case .fileRegion:
                events.append(.fileRegion)
            }
            if let failure {
                promise?.fail(failure)
            } else {
                context.write(data, promise: promise)
            }
        }

        func flush(context: ChannelHandlerContext) {
            events.append(.flush)
            context.flush()
        }

        func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
            events.append(.close)
            context.close(mode: mode, promise: promise)
        }
    }

    private struct WriteFailed: Error {}

    private func makeChannel() throws -> (EmbeddedChannel, WireRecorder) {
        let wire = WireRecorder()
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(wire)
        try channel.pipeline.syncOperations.addHandler(TLSWriteCoalescer())
        return (channel, wire)
    }

    private func buffer(_ text: String, _ channel: EmbeddedChannel) -> ByteBuffer {
        channel.allocator.buffer(string: text)
    }

    func testAHeadABodyAndAnEmptyEndLeaveAsOneBufferAtTheFlush() throws {
        let (channel, wire) = try makeChannel()
        let promises = (0..<3).map { _ in channel.eventLoop.makePromise(of: Void.self) }
        channel.write(buffer("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n", channel), promise: promises[0])
        channel.write(buffer("hello", channel), promise: promises[1])
        channel.write(channel.allocator.buffer(capacity: 0), promise: promises[2])
        XCTAssertEqual(wire.events, [], "held until the flush")
        channel.flush()
        XCTAssertEqual(wire.events, [.write("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), .flush])
        for promise in promises { XCTAssertNoThrow(try promise.futureResult.wait()) }
        XCTAssertEqual(try channel.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) },
                       "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello")
        XCTAssertNil(try channel.readOutbound(as: ByteBuffer.self))
        XCTAssertTrue(try channel.finish().isClean)
    }

    func testASingleWriteGoesOnAsItCameWithoutACopy() throws {
        let (channel, wire) = try makeChannel()
        let only = buffer("just one", channel)
        let address = only.withUnsafeReadableBytes { $0.baseAddress.map(UnsafeRawPointer.init) }
        channel.writeAndFlush(only, promise: nil)
        XCTAssertEqual(wire.events, [.write("just one"), .flush])
        XCTAssertEqual(wire.storage, [address])
        _ = try? channel.finish()
    }

    func testAWriteThatWouldPassTheBoundFollowsTheHeldOnesUntouched() throws {
        let (channel, wire) = try makeChannel()
        let large = String(repeating: "b", count: TLSWriteCoalescer.maxJoinedBytes)
        let largeBuffer = buffer(large, channel)
        let largeAddress = largeBuffer.withUnsafeReadableBytes { $0.baseAddress.map(UnsafeRawPointer.init) }
        channel.write(buffer("head;", channel), promise: nil)
        channel.write(buffer("more;", channel), promise: nil)
        channel.write(largeBuffer, promise: nil)
        channel.write(buffer("tail", channel), promise: nil)
        XCTAssertEqual(wire.events, [.write("head;more;"), .write(large)], "in order; the last is held")
        XCTAssertEqual(wire.storage.last, largeAddress)
        channel.flush()
        XCTAssertEqual(wire.events.suffix(2), [.write("tail"), .flush])
        _ = try? channel.finish()
    }

    func testAFileRegionFollowsTheHeldWrites() throws {
        let (channel, wire) = try makeChannel()
        channel.write(buffer("head", channel), promise: nil)
        let handle = NIOFileHandle(_deprecatedTakingOwnershipOfDescriptor: dup(STDIN_FILENO))
        defer { try? handle.close() }
        channel.write(IOData.fileRegion(FileRegion(fileHandle: handle, readerIndex: 0, endIndex: 0)), promise: nil)
        XCTAssertEqual(wire.events, [.write("head"), .fileRegion])
        _ = try? channel.finish()
    }

    func testAFailedJoinedWriteFailsEveryPromiseInIt() throws {
        let (channel, wire) = try makeChannel()
        wire.failure = WriteFailed()
        let promises = (0..<3).map { _ in channel.eventLoop.makePromise(of: Void.self) }
        channel.write(buffer("a", channel), promise: promises[0])
        channel.write(buffer("b", channel), promise: nil)
        channel.write(buffer("c", channel), promise: promises[1])
        channel.write(buffer("", channel), promise: promises[2])
        channel.flush()
        XCTAssertEqual(wire.events, [.write("abc"), .flush])
        for promise in promises {
            XCTAssertThrowsError(try promise.futureResult.wait()) { XCTAssertTrue($0 is WriteFailed) }
        }
        _ = try? channel.finish()
    }

    func testHeldWritesGoOutBeforeAClose() throws {
        let (channel, wire) = try makeChannel()
        channel.write(buffer("bye", channel), promise: nil)
        channel.write(buffer("!", channel), promise: nil)
        channel.close(promise: nil)
        XCTAssertEqual(wire.events, [.write("bye!"), .close])
    }

    func testHeldWritesGoOutWhenTheCoalescerIsRemoved() throws {
        let (channel, wire) = try makeChannel()
        channel.write(buffer("upgraded", channel), promise: nil)
        channel.write(buffer(" now", channel), promise: nil)
        let coalescer = try channel.pipeline.syncOperations.handler(type: TLSWriteCoalescer.self)
        try channel.pipeline.syncOperations.removeHandler(coalescer).wait()
        XCTAssertEqual(wire.events, [.write("upgraded now")])
        channel.flush()
        XCTAssertEqual(try channel.readOutbound(as: ByteBuffer.self).map { String(buffer: $0) }, "upgraded now")
        _ = try? channel.finish()
    }

    func testItIsInstalledOnlyAfterATLSHandler() throws {
        let plain = EmbeddedChannel()
        try TLSWriteCoalescer.install(on: plain.pipeline.syncOperations)
        XCTAssertNil(try? plain.pipeline.syncOperations.handler(type: TLSWriteCoalescer.self))
        let tls = EmbeddedChannel()
        let context = try NIOSSLContext(configuration: .makeClientConfiguration())
        try tls.pipeline.syncOperations.addHandler(NIOSSLClientHandler(context: context, serverHostname: nil))
        try TLSWriteCoalescer.install(on: tls.pipeline.syncOperations)
        XCTAssertNotNil(try? tls.pipeline.syncOperations.handler(type: TLSWriteCoalescer.self))
        _ = try? plain.finish()
        _ = try? tls.finish()
    }
}
