import NIOCore
import NIOEmbedded
import NIOPosix
import XCTest

@testable import ProxyEngine

/// TLS channels read fewer times per cycle than plain ones (NIOSSL keeps a plaintext buffer as
/// large as one cycle's reads for the connection's life), and never more than a channel that
/// was bounded lower already (a throttled one). Receive buffers a large transfer grew are let go.
final class ChannelTuningTests: XCTestCase {
    /// Runs `body` on the event loop of a loopback client channel tuned as the proxy's are.
    private func onTunedClient<Result: Sendable>(_ body: @escaping @Sendable (any Channel) throws -> Result) throws -> Result {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let server = try ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).wait()
        defer { try? server.close().wait() }
        let client = try ClientBootstrap(group: group)
            .channelOption(.maxMessagesPerRead, value: ChannelTuning.maxMessagesPerRead)
            .connect(to: server.localAddress!).wait()
        defer { try? client.close().wait() }
        return try client.eventLoop.submit { try body(client) }.wait()
    }

    func testTLSReadsAreBoundedAndNeverRaised() throws {
        let reads = try onTunedClient { client -> [UInt] in
            let options = try XCTUnwrap(client.syncOptions)
            let plain = try options.getOption(.maxMessagesPerRead)
            try ChannelTuning.boundTLSReads(on: client)
            let bounded = try options.getOption(.maxMessagesPerRead)
            try options.setOption(.maxMessagesPerRead, value: 1)
            try ChannelTuning.boundTLSReads(on: client)
            return [plain, bounded, try options.getOption(.maxMessagesPerRead)]
        }
        XCTAssertEqual(reads, [16, ChannelTuning.tlsMaxMessagesPerRead, 1])
        XCTAssertLessThan(ChannelTuning.tlsMaxMessagesPerRead, ChannelTuning.maxMessagesPerRead)
    }

    /// After a large transfer a socket channel's receive-buffer pool is shrunk and its reads per
    /// cycle are as before; a channel without the pool (here a test channel, which would stop
    /// the process on the option) is left alone.
    func testReadBuffersAreReleasedOnSocketChannelsOnly() throws {
        let (released, reads) = try onTunedClient { client -> (Bool, UInt) in
            let released = ChannelTuning.releaseReadBuffers(on: client)
            return (released, try XCTUnwrap(client.syncOptions).getOption(.maxMessagesPerRead))
        }
        XCTAssertTrue(released)
        XCTAssertEqual(reads, ChannelTuning.maxMessagesPerRead)
        XCTAssertFalse(ChannelTuning.releaseReadBuffers(on: EmbeddedChannel()))
    }
}
