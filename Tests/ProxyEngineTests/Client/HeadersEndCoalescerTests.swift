import NIOCore
import NIOEmbedded
import NIOHPACK
import NIOHTTP2
import XCTest
@testable import ProxyEngine

/// A response head followed at once by a bare end leaves as one HEADERS frame with END_STREAM
/// (gRPC's trailers-only form); anything else leaves as written, in order, and a head is never
/// held past a flush or a close.
final class HeadersEndCoalescerTests: XCTestCase {
    private let head = HTTP2Frame.FramePayload.headers(.init(headers: [":status": "200", "grpc-status": "5"]))

    private func makeChannel() throws -> EmbeddedChannel {
        let channel = EmbeddedChannel()
        try channel.pipeline.syncOperations.addHandler(HeadersEndCoalescer())
        return channel
    }

    private func emptyEnd(_ channel: EmbeddedChannel) -> HTTP2Frame.FramePayload {
        .data(.init(data: .byteBuffer(channel.allocator.buffer(capacity: 0)), endStream: true))
    }

    /// A short description of each frame written: `H` / `H!` (END_STREAM), `D3` / `D0!`.
    private func written(_ channel: EmbeddedChannel) throws -> [String] {
        var frames: [String] = []
        while let payload = try channel.readOutbound(as: HTTP2Frame.FramePayload.self) {
            switch payload {
            case .headers(let headers): frames.append(headers.endStream ? "H!" : "H")
            case .data(let data): frames.append("D\(data.data.readableBytes)" + (data.endStream ? "!" : ""))
            default: frames.append("?")
            }
        }
        return frames
    }

    func testHeadThenBareEndBecomesOneHeadersFrame() throws {
        let channel = try makeChannel()
        let headWritten = channel.write(head)
        let endWritten = channel.write(emptyEnd(channel))
        channel.flush()
        XCTAssertEqual(try written(channel), ["H!"])
        XCTAssertNoThrow(try headWritten.wait())
        XCTAssertNoThrow(try endWritten.wait())
    }

    func testHeadFlushedAloneIsNotHeld() throws {
        let channel = try makeChannel()
        channel.write(head, promise: nil)
        XCTAssertEqual(try written(channel), [], "held until the flush")
        channel.flush()
        XCTAssertEqual(try written(channel), ["H"])
        channel.writeAndFlush(emptyEnd(channel), promise: nil)
        XCTAssertEqual(try written(channel), ["D0!"])
    }

    func testHeadThenBodyKeepsBothInOrder() throws {
        let channel = try makeChannel()
        channel.write(head, promise: nil)
        channel.write(HTTP2Frame.FramePayload.data(.init(data: .byteBuffer(ByteBuffer(string: "abc")))), promise: nil)
        channel.write(HTTP2Frame.FramePayload.headers(.init(headers: ["grpc-status": "0"], endStream: true)), promise: nil)
        channel.flush()
        XCTAssertEqual(try written(channel), ["H", "D3", "H!"])
    }

    func testHeadWithEndStreamPassesAtOnce() throws {
        let channel = try makeChannel()
        channel.write(HTTP2Frame.FramePayload.headers(.init(headers: [":status": "204"], endStream: true)), promise: nil)
        channel.write(HTTP2Frame.FramePayload.headers(.init(headers: [":status": "200"], endStream: true)), promise: nil)
        channel.flush()
        XCTAssertEqual(try written(channel), ["H!", "H!"])
    }

    func testCloseWritesAHeldHead() throws {
        let channel = try makeChannel()
        channel.write(head, promise: nil)
        _ = try? channel.close().wait()
        XCTAssertEqual(try written(channel), ["H"])
    }
}
