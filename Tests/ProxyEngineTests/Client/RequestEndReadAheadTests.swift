import NIOCore
import NIOEmbedded
import NIOHTTP1
import XCTest
@testable import ProxyEngine

/// A keep-alive connection stays in the read set while each response is awaited (no epoll_ctl
/// per request), yet a pipelining client still gets no more than one read cycle ahead, and
/// CONNECT and upgrade requests are never read past.
///
/// `SocketReadModel` plays NIOPosix's part (`BaseSocketChannel.readable0`/`read0`): a `read()`
/// reaching the socket sets `readPending` and registers for reads; a read cycle clears it; after
/// the cycle autoRead asks the pipeline for a read, and a socket with still no read pending
/// leaves the read set. Every join or leave is one `epoll_ctl`.
final class RequestEndReadAheadTests: XCTestCase {
    /// NIOPosix's read bookkeeping for one socket, at the head of the pipeline.
    private final class SocketReadModel: ChannelOutboundHandler {
        typealias OutboundIn = NIOAny
        private(set) var readPending = true
        private(set) var registered = true
        /// epoll_ctl calls: the socket joining or leaving the read set.
        private(set) var registrationChanges = 0

        func read(context: ChannelHandlerContext) {
            readPending = true
            if !registered {
                registered = true
                registrationChanges += 1
            }
            context.read()
        }

        /// One read cycle bringing `text`, then autoRead, then leaving the read set if no read
        /// is pending.
        func cycle(_ text: String, on channel: EmbeddedChannel) throws {
            XCTAssertTrue(registered, "bytes are read only while the socket is in the read set")
            readPending = false
            try channel.writeInbound(ByteBuffer(string: text))
            if !readPending { channel.pipeline.read() }
            if !readPending {
                registered = false
                registrationChanges += 1
            }
        }
    }

    /// The application end: takes requests as the pipelining handler delivers them, answers
    /// when told to, and lets every read through.
    private final class Application: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        private(set) var requests: [String] = []
        private var context: ChannelHandlerContext?

        func handlerAdded(context: ChannelHandlerContext) { self.context = context }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            if case .head(let head) = unwrapInboundIn(data) { requests.append("\(head.method) \(head.uri)") }
        }

        func respond() {
            guard let context else { return }
            let head = HTTPResponseHead(version: .http1_1, status: .ok, headers: ["content-length": "0"])
            context.write(wrapOutboundOut(.head(head)), promise: nil)
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
        }
    }

    private struct Connection {
        let channel = EmbeddedChannel()
        let socket = SocketReadModel()
        let application = Application()

        /// The client pipeline's HTTP handlers as `ClientPipelineSetup.configure` sets them up,
        /// with or without the read-ahead.
        init(readAhead: Bool = true) throws {
            let pipeline = channel.pipeline.syncOperations
            try pipeline.configureHTTPServerPipeline(withPipeliningAssistance: true, withErrorHandling: false)
            if readAhead {
                try pipeline.addHandler(RequestEndReadAhead(),
                                        position: .after(try pipeline.handler(type: ByteToMessageHandler<HTTPRequestDecoder>.self)))
            }
            try pipeline.addHandler(socket, position: .first)
            try pipeline.addHandler(application)
        }

        func cycle(_ text: String) throws { try socket.cycle(text, on: channel) }

        func respond() throws {
            application.respond()
            var received = ""
            while let buffer = try channel.readOutbound(as: ByteBuffer.self) { received += String(buffer: buffer) }
            XCTAssertTrue(received.hasPrefix("HTTP/1.1 200 OK"), received)
        }
    }

    private static func get(_ path: String) -> String { "GET \(path) HTTP/1.1\r\nHost: a.test\r\n\r\n" }

    func testKeepAliveRequestsCostNoRegistrationChanges() throws {
        let connection = try Connection()
        for index in 0..<3 {
            try connection.cycle(Self.get("/\(index)"))
            try connection.respond()
        }
        XCTAssertEqual(connection.application.requests, ["GET /0", "GET /1", "GET /2"])
        XCTAssertEqual(connection.socket.registrationChanges, 0)
        XCTAssertTrue(connection.socket.registered)
    }

    /// The same connection without the handler: two epoll_ctl calls per request (what the
    /// handler is for; this also shows the model counts them).
    func testWithoutTheHandlerEachRequestLeavesAndRejoinsTheReadSet() throws {
        let connection = try Connection(readAhead: false)
        for index in 0..<3 {
            try connection.cycle(Self.get("/\(index)"))
            try connection.respond()
        }
        XCTAssertEqual(connection.socket.registrationChanges, 6)
    }

    /// A request body arriving over several cycles is read as before; the read-ahead comes only
    /// after its end.
    func testBodyAcrossCyclesThenReadAhead() throws {
        let connection = try Connection()
        try connection.cycle("POST /u HTTP/1.1\r\nHost: a.test\r\nContent-Length: 6\r\n\r\nabc")
        try connection.cycle("def")
        XCTAssertTrue(connection.socket.registered)
        try connection.respond()
        try connection.cycle(Self.get("/next"))
        try connection.respond()
        XCTAssertEqual(connection.application.requests, ["POST /u", "GET /next"])
        XCTAssertEqual(connection.socket.registrationChanges, 0)
    }

    /// A client pipelining while a response is awaited gets one cycle read ahead, no more: the
    /// socket leaves the read set until the responses catch up, and every request is answered
    /// in order.
    func testPipelinedRequestsAreReadAtMostOneCycleAhead() throws {
        let connection = try Connection()
        try connection.cycle(Self.get("/a"))
        try connection.cycle(Self.get("/b") + Self.get("/c"))
        XCTAssertFalse(connection.socket.registered, "after the cycle read ahead, nothing more is read")
        XCTAssertEqual(connection.application.requests, ["GET /a"])
        try connection.respond()
        XCTAssertEqual(connection.application.requests, ["GET /a", "GET /b"])
        XCTAssertFalse(connection.socket.registered, "queued requests are answered before more is read")
        try connection.respond()
        XCTAssertEqual(connection.application.requests, ["GET /a", "GET /b", "GET /c"])
        try connection.respond()
        XCTAssertTrue(connection.socket.registered, "reading resumes once every queued request is answered")
        try connection.cycle(Self.get("/d"))
        XCTAssertEqual(connection.application.requests.last, "GET /d")
    }

    /// A pipelined request arriving alone in the cycle read ahead does not earn another cycle.
    func testAPipelinedRequestInTheCycleReadAheadDoesNotReadFurther() throws {
        let connection = try Connection()
        try connection.cycle(Self.get("/a"))
        try connection.cycle(Self.get("/b"))
        XCTAssertFalse(connection.socket.registered)
        XCTAssertEqual(connection.application.requests, ["GET /a"])
    }

    func testConnectIsNotReadPast() throws {
        let connection = try Connection()
        try connection.cycle("CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n")
        XCTAssertFalse(connection.socket.registered, "a tunnel's reads are the relay's to pace")
    }

    func testUpgradeRequestIsNotReadPast() throws {
        let connection = try Connection()
        try connection.cycle("GET /ws HTTP/1.1\r\nHost: a.test\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n")
        XCTAssertFalse(connection.socket.registered)
        let lowercase = try Connection()
        try lowercase.cycle("GET /ws HTTP/1.1\r\nHost: a.test\r\nconnection: upgrade\r\nUPGRADE: h2c\r\n\r\n")
        XCTAssertFalse(lowercase.socket.registered, "header names compare without case")
    }
}
