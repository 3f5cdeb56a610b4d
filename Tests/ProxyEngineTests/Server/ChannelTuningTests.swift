import NIOCore
import NIOPosix
import XCTest

@testable import ProxyEngine

/// TLS channels read fewer times per cycle than plain ones (NIOSSL keeps a plaintext buffer as
/// large as one cycle's reads for the connection's life), and never more than a channel that
/// was bounded lower already (a throttled one).
final class ChannelTuningTests: XCTestCase {
    func testTLSReadsAreBoundedAndNeverRaised() throws {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        defer { try? group.syncShutdownGracefully() }
        let server = try ServerBootstrap(group: group).bind(host: "127.0.0.1", port: 0).wait()
        defer { try? server.close().wait() }
        let client = try ClientBootstrap(group: group)
            .channelOption(.maxMessagesPerRead, value: ChannelTuning.maxMessagesPerRead)
            .connect(to: server.localAddress!).wait()
        defer { try? client.close().wait() }
        let reads = try client.eventLoop.submit { () throws -> [UInt] in
            let options = try XCTUnwrap(client.syncOptions)
            let plain = try options.getOption(.maxMessagesPerRead)
            try ChannelTuning.boundTLSReads(on: client)
            let bounded = try options.getOption(.maxMessagesPerRead)
            try options.setOption(.maxMessagesPerRead, value: 1)
            try ChannelTuning.boundTLSReads(on: client)
            return [plain, bounded, try options.getOption(.maxMessagesPerRead)]
        }.wait()
        XCTAssertEqual(reads, [16, ChannelTuning.tlsMaxMessagesPerRead, 1])
        XCTAssertLessThan(ChannelTuning.tlsMaxMessagesPerRead, ChannelTuning.maxMessagesPerRead)
    }
}
