import Foundation
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import XCTest
@testable import ProxyEngine

/// The listener's pause on EMFILE and its kin, on a real listening socket: while paused nothing
/// is accepted (connections wait in the backlog), then accepting resumes on its own; other
/// errors pass through untouched. The end-to-end flood (`DescriptorFloodTests`) checks the
/// real EMFILE and that no core spins.
final class AcceptPauseHandlerTests: XCTestCase {
    private var group: MultiThreadedEventLoopGroup!
    /// The clients' own loop, so connecting never depends on the loop under test.
    private var clientGroup: MultiThreadedEventLoopGroup!

    override func setUp() {
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    }

    override func tearDown() {
        try? clientGroup.syncShutdownGracefully()
        try? group.syncShutdownGracefully()
    }

    /// Connects to `server` (the kernel completes the handshake whether or not it is accepted).
    private func connect(to server: any Channel) throws -> any Channel {
        try ClientBootstrap(group: clientGroup).connect(to: server.localAddress!).wait()
    }

    /// A listening channel with the handler, counting accepted connections and the errors that
    /// get past the handler; closed at the end of the test.
    private func listen(pause: TimeAmount) throws -> (server: any Channel, accepted: NIOLockedValueBox<Int>,
                                                     errors: NIOLockedValueBox<[String]>) {
        let accepted = NIOLockedValueBox(0)
        let errors = NIOLockedValueBox<[String]>([])
        let server = try ServerBootstrap(group: group)
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        AcceptPauseHandler(pause: pause, logger: Logger(label: "test")), name: "pause")
                    try channel.pipeline.syncOperations.addHandler(ErrorRecorder(errors: errors))
                }
            }
            .childChannelInitializer { channel in
                accepted.withLockedValue { $0 += 1 }
                return channel.eventLoop.makeSucceededVoidFuture()
            }
            .bind(host: "127.0.0.1", port: 0).wait()
        addTeardownBlock { try? server.close().wait() }
        return (server, accepted, errors)
    }

    private func autoRead(_ channel: any Channel) throws -> Bool {
        try channel.getOption(.autoRead).wait()
    }

    /// Polls `condition` for at most 5 s.
    private func eventually(_ condition: () throws -> Bool) rethrows -> Bool {
        for _ in 0..<500 {
            if try condition() { return true }
            usleep(10_000)
        }
        return try condition()
    }

    func testOutOfDescriptorsPausesAcceptingUntilThePauseEnds() throws {
        // A pause far longer than the test: only removing the handler ends it.
        let (server, accepted, errors) = try listen(pause: .hours(1))
        for code in [EMFILE, ENFILE] {
            server.pipeline.fireErrorCaught(IOError(errnoCode: code, reason: "accept"))
        }
        XCTAssertFalse(try autoRead(server), "the listening socket is no longer watched")

        let waiting = try connect(to: server)
        usleep(200_000)
        XCTAssertEqual(accepted.withLockedValue { $0 }, 0, "the connection waits in the backlog")
        XCTAssertEqual(errors.withLockedValue { $0 }, [], "the shortage is handled, not passed on")

        try server.pipeline.removeHandler(name: "pause").wait()
        XCTAssertTrue(try autoRead(server), "a removed handler never leaves the listener paused")
        XCTAssertTrue(eventually { accepted.withLockedValue { $0 } == 1 }, "the waiting connection is accepted")
        try waiting.close().wait()
    }

    func testAcceptingResumesAfterThePause() throws {
        let (server, accepted, _) = try listen(pause: .milliseconds(50))
        server.pipeline.fireErrorCaught(IOError(errnoCode: EMFILE, reason: "accept"))
        XCTAssertTrue(try eventually { try autoRead(server) }, "watching again once the pause is over")
        let client = try connect(to: server)
        XCTAssertTrue(eventually { accepted.withLockedValue { $0 } == 1 })
        try client.close().wait()
    }

    /// A reset or any other error is not a reason to stop accepting.
    func testOtherErrorsPassThrough() throws {
        let (server, _, errors) = try listen(pause: .hours(1))
        server.pipeline.fireErrorCaught(IOError(errnoCode: ECONNABORTED, reason: "accept"))
        server.pipeline.fireErrorCaught(ChannelError.ioOnClosedChannel)
        XCTAssertTrue(eventually { errors.withLockedValue { $0 }.count == 2 })
        XCTAssertTrue(try autoRead(server))
        XCTAssertTrue(AcceptPauseHandler.isResourceShortage(IOError(errnoCode: ENOBUFS, reason: "accept")))
        XCTAssertTrue(AcceptPauseHandler.isResourceShortage(IOError(errnoCode: ENOMEM, reason: "accept")))
        XCTAssertFalse(AcceptPauseHandler.isResourceShortage(IOError(errnoCode: ECONNABORTED, reason: "accept")))
        XCTAssertFalse(AcceptPauseHandler.isResourceShortage(ChannelError.eof))
    }
}

/// Records the errors that reach the end of the listening channel's pipeline.
private final class ErrorRecorder: ChannelInboundHandler {
    typealias InboundIn = NIOAny
    private let errors: NIOLockedValueBox<[String]>
    init(errors: NIOLockedValueBox<[String]>) { self.errors = errors }
    func channelRead(context: ChannelHandlerContext, data: NIOAny) { context.fireChannelRead(data) }
    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        errors.withLockedValue { $0.append("\(error)") }
    }
}
