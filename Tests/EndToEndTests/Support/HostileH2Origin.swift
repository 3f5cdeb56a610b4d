import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

/// An HTTP/2 origin that misbehaves on purpose: TLS on 127.0.0.1 (ALPN `h2`, a certificate of the
/// test origin CA), then raw frames, so a test can send what NIOHTTP2 would never let a server
/// send (a GOAWAY naming fewer streams than it took, PUSH_PROMISE despite ENABLE_PUSH=0, bad
/// padding, connection-specific response fields, a body longer than its `content-length`).
///
/// It reads the proxy's frames without an HPACK decoder: a header block is walked field by field
/// and only fully indexed static-table entries are recognised, which is enough to tell `GET` from
/// `POST` and the path `/` (a well-behaved answer unless the script says otherwise) from
/// `/index.html` (what a test points its attack at). Everything else it does is the `Script`'s.
final class HostileH2Origin: Sendable {
    /// One request stream as the origin saw it.
    struct Request: Sendable {
        /// Which accepted connection (1-based) carried it.
        var connection: Int
        var stream: UInt32
        /// `GET`, `POST`, … when `:method` came as a static-table index; nil otherwise.
        var method: String?
        /// `/` or `/index.html` (static-table entries); nil for any other path.
        var path: String?
        var bodyBytes = 0
        /// END_STREAM arrived.
        var ended = false
        /// The proxy reset this stream (its RST_STREAM error code).
        var resetCode: UInt32?
    }

    /// What the origin does; every closure runs on the origin's event loop.
    struct Script: Sendable {
        /// SETTINGS sent right after the proxy's preface on the connection numbered (from 1) as
        /// given (nil: none, ever).
        var settings: @Sendable (_ connection: Int) -> [Setting]? = { _ in [] }
        /// The proxy's SETTINGS are acknowledged (on connections that send SETTINGS of their own:
        /// an ACK before them is a protocol error).
        var acknowledgesSettings = true
        /// Request bodies are granted window as they arrive (off: the 65,535-byte initial window,
        /// or SETTINGS_INITIAL_WINDOW_SIZE, is all the proxy may send).
        var grantsWindow = true
        /// A request's HEADERS arrived (its body may follow).
        var onHeaders: @Sendable (HostileH2Connection, Request) -> Void = { _, _ in }
        /// A request ended (END_STREAM); by default answered `200` with the body `ok`.
        var onRequest: @Sendable (HostileH2Connection, Request) -> Void = { connection, request in
            connection.respond(request.stream)
        }

        init(settings: @escaping @Sendable (_ connection: Int) -> [Setting]? = { _ in [] }, acknowledgesSettings: Bool = true, grantsWindow: Bool = true,
             onHeaders: @escaping @Sendable (HostileH2Connection, Request) -> Void = { _, _ in },
             onRequest: @escaping @Sendable (HostileH2Connection, Request) -> Void = { connection, request in
                 connection.respond(request.stream)
             }) {
            self.settings = settings
            self.acknowledgesSettings = acknowledgesSettings
            self.grantsWindow = grantsWindow
            self.onHeaders = onHeaders
            self.onRequest = onRequest
        }
    }

    struct Setting: Sendable {
        var parameter: UInt16
        var value: UInt32
        static func maxConcurrentStreams(_ value: UInt32) -> Setting { Setting(parameter: 3, value: value) }
        static func initialWindowSize(_ value: UInt32) -> Setting { Setting(parameter: 4, value: value) }
    }

    /// A frame the proxy sent.
    struct ReceivedFrame: Sendable {
        var connection: Int
        var type: UInt8
        var flags: UInt8
        var stream: UInt32
        /// RST_STREAM's or GOAWAY's error code.
        var errorCode: UInt32?
    }

    private struct State {
        var connections = 0
        var closedConnections = 0
        var requests: [Request] = []
        var frames: [ReceivedFrame] = []
    }

    let port: Int
    let script: Script
    private let state = NIOLockedValueBox(State())
    private let group: MultiThreadedEventLoopGroup
    private let channel: NIOLockedValueBox<(any Channel)?>

    private init(port: Int, script: Script, group: MultiThreadedEventLoopGroup, channel: any Channel) {
        self.port = port
        self.script = script
        self.group = group
        self.channel = NIOLockedValueBox(channel)
    }

    /// Listens on 127.0.0.1, port 0, TLS with `tls` (its ALPN must offer `h2`).
    static func start(tls: NIOSSLContext, script: Script) async throws -> HostileH2Origin {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let box = NIOLockedValueBox<HostileH2Origin?>(nil)
        do {
            let channel = try await ServerBootstrap(group: group)
                .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                .childChannelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        guard let origin = box.withLockedValue({ $0 }) else { throw ChannelError.ioOnClosedChannel }
                        let pipeline = channel.pipeline.syncOperations
                        try pipeline.addHandler(NIOSSLServerHandler(context: tls))
                        try pipeline.addHandler(FrameHandler(connection: HostileH2Connection(origin: origin)))
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            guard let port = channel.localAddress?.port else { throw ChannelError.unknownLocalAddress }
            let origin = HostileH2Origin(port: port, script: script, group: group, channel: channel)
            box.withLockedValue { $0 = origin }
            return origin
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    /// `https://localhost:PORT` + `path`.
    func url(_ path: String) -> String { "https://localhost:\(port)\(path)" }

    var connections: Int { state.withLockedValue { $0.connections } }
    var closedConnections: Int { state.withLockedValue { $0.closedConnections } }
    /// Every request stream so far, in the order their HEADERS arrived.
    var requests: [Request] { state.withLockedValue { $0.requests } }
    /// Every frame the proxy sent after its preface.
    var frames: [ReceivedFrame] { state.withLockedValue { $0.frames } }

    /// Requests for `path` (`/` or `/index.html`).
    func requests(path: String) -> [Request] { requests.filter { $0.path == path } }

    /// Waits until `condition` holds on what the origin saw (at most `timeout` seconds).
    func wait(timeout: TimeInterval = 5, until condition: (HostileH2Origin) -> Bool) async throws -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition(self) {
            guard Date() < deadline else { return false }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        return true
    }

    func shutdown() async {
        let channel = self.channel.withLockedValue { $0 }
        try? await channel?.close()
        try? await group.shutdownGracefully()
    }

    fileprivate func opened() -> Int {
        state.withLockedValue { state in
            state.connections += 1
            return state.connections
        }
    }

    fileprivate func closed() {
        state.withLockedValue { $0.closedConnections += 1 }
    }

    fileprivate func record(_ request: Request) {
        state.withLockedValue { state in
            if let index = state.requests.lastIndex(where: { $0.connection == request.connection && $0.stream == request.stream }) {
                state.requests[index] = request
            } else {
                state.requests.append(request)
            }
        }
    }

    fileprivate func record(_ frame: ReceivedFrame) {
        state.withLockedValue { $0.frames.append(frame) }
    }

    // MARK: frames

    static func frame(type: UInt8, flags: UInt8 = 0, stream: UInt32 = 0, _ payload: [UInt8] = []) -> [UInt8] {
        frame(type: type, flags: flags, stream: stream, length: payload.count, payload)
    }

    /// A frame whose header states `length`, whatever the payload's size.
    static func frame(type: UInt8, flags: UInt8 = 0, stream: UInt32 = 0, length: Int, _ payload: [UInt8]) -> [UInt8] {
        [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
            + uint32(stream & 0x7FFF_FFFF) + payload
    }

    static func uint32(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// A header block: `:status` then `fields`, as literals without indexing (no Huffman).
    static func headerBlock(status: Int, _ fields: [(String, String)]) -> [UInt8] {
        var block = status == 200 ? [0x88] : H2Frames.integer(8, prefixBits: 4, first: 0) + string(String(status))
        for (name, value) in fields {
            block += H2Frames.literal(name, value)
        }
        return block
    }

    static func string(_ text: String) -> [UInt8] {
        H2Frames.integer(text.utf8.count, prefixBits: 7, first: 0) + Array(text.utf8)
    }

    static let methods: [Int: String] = [2: "GET", 3: "POST"]
    static let paths: [Int: String] = [4: "/", 5: "/index.html"]

    /// The static-table `:method` and `:path` of a header block, when they are indexed fields;
    /// literal fields are skipped by their lengths (their Huffman text is never read).
    static func indexedMethodAndPath(_ block: ArraySlice<UInt8>) -> (String?, String?) {
        var method: String?
        var path: String?
        var bytes = block
        func integer(prefixBits: Int) -> Int? {
            guard let first = bytes.popFirst() else { return nil }
            let limit = (1 << prefixBits) - 1
            var value = Int(first) & limit
            guard value == limit else { return value }
            var shift = 0
            while let byte = bytes.popFirst() {
                value += Int(byte & 0x7F) << shift
                shift += 7
                if byte & 0x80 == 0 { return value }
            }
            return nil
        }
        func skipString() -> Bool {
            guard let length = integer(prefixBits: 7), bytes.count >= length else { return false }
            bytes = bytes.dropFirst(length)
            return true
        }
        while let first = bytes.first {
            if first & 0x80 != 0 {
                guard let index = integer(prefixBits: 7) else { break }
                method = method ?? methods[index]
                path = path ?? paths[index]
            } else if first & 0xE0 == 0x20 {
                guard integer(prefixBits: 5) != nil else { break }
            } else {
                let prefix = first & 0xC0 == 0x40 ? 6 : 4
                guard let nameIndex = integer(prefixBits: prefix) else { break }
                if nameIndex == 0 && !skipString() { break }
                if !skipString() { break }
            }
        }
        return (method, path)
    }
}

/// One connection of a `HostileH2Origin`: what a script uses to answer (or not). Used only on
/// its channel's event loop.
final class HostileH2Connection {
    let origin: HostileH2Origin
    /// 1-based, in the order the origin accepted connections.
    private(set) var number = 0
    /// Requests of this connection, in the order their HEADERS arrived.
    private(set) var requests: [HostileH2Origin.Request] = []
    fileprivate var context: ChannelHandlerContext?

    fileprivate init(origin: HostileH2Origin) {
        self.origin = origin
    }

    fileprivate func opened(context: ChannelHandlerContext) {
        self.context = context
        number = origin.opened()
    }

    /// Requests of this connection not yet answered (`respond`, `rstStream`, `markAnswered`).
    var pending: [HostileH2Origin.Request] { requests.filter { !answered.contains($0.stream) } }
    private var answered: Set<UInt32> = []

    fileprivate func update(_ stream: UInt32, _ change: (inout HostileH2Origin.Request) -> Void) -> HostileH2Origin.Request? {
        guard let index = requests.firstIndex(where: { $0.stream == stream }) else { return nil }
        change(&requests[index])
        origin.record(requests[index])
        return requests[index]
    }

    fileprivate func add(_ request: HostileH2Origin.Request) {
        requests.append(request)
        origin.record(request)
    }

    func send(_ bytes: [UInt8]) {
        guard let context else { return }
        var buffer = context.channel.allocator.buffer(capacity: bytes.count)
        buffer.writeBytes(bytes)
        context.writeAndFlush(NIOAny(buffer), promise: nil)
    }

    /// HEADERS (`:status` and `fields`) and, unless `body` is nil, one DATA frame ending the
    /// stream; `content-length` is the body's unless `fields` name one.
    func respond(_ stream: UInt32, status: Int = 200, fields: [(String, String)] = [], body: String? = "ok") {
        guard !answered.contains(stream) else { return }
        answered.insert(stream)
        var fields = fields
        if let body, !fields.contains(where: { $0.0 == "content-length" }) {
            fields.append(("content-length", String(body.utf8.count)))
        }
        let block = HostileH2Origin.headerBlock(status: status, fields)
        var bytes = HostileH2Origin.frame(type: 1, flags: body == nil ? 0x5 : 0x4, stream: stream, block)
        if let body {
            bytes += HostileH2Origin.frame(type: 0, flags: 0x1, stream: stream, Array(body.utf8))
        }
        send(bytes)
    }

    /// Marks `stream` as dealt with (it leaves `pending`) without sending anything.
    func markAnswered(_ stream: UInt32) {
        answered.insert(stream)
    }

    func rstStream(_ stream: UInt32, code: UInt32) {
        answered.insert(stream)
        send(HostileH2Origin.frame(type: 3, stream: stream, HostileH2Origin.uint32(code)))
    }

    func goAway(lastStream: UInt32, code: UInt32 = 0) {
        send(HostileH2Origin.frame(type: 7, HostileH2Origin.uint32(lastStream) + HostileH2Origin.uint32(code)))
    }

    /// Closes the TCP connection (after TLS close_notify), no GOAWAY.
    func close() {
        context?.close(promise: nil)
    }

    /// Runs `body` on this connection's loop after `delay`.
    func after(_ delay: TimeAmount, _ body: @escaping () -> Void) {
        context?.eventLoop.assumeIsolated().scheduleTask(in: delay) { body() }
    }
}

/// Bytes in: the preface, then frames, handed to the connection's script.
private final class FrameHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let connection: HostileH2Connection
    private var bytes: [UInt8] = []
    private var prefaceRead = false
    private var script: HostileH2Origin.Script { connection.origin.script }

    init(connection: HostileH2Connection) {
        self.connection = connection
    }

    func channelActive(context: ChannelHandlerContext) {
        connection.opened(context: context)
        context.fireChannelActive()
    }

    func channelInactive(context: ChannelHandlerContext) {
        connection.origin.closed()
        connection.context = nil
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.close(promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        bytes += unwrapInboundIn(data).readableBytesView
        if !prefaceRead {
            guard bytes.count >= H2Frames.preface.count else { return }
            bytes.removeFirst(H2Frames.preface.count)
            prefaceRead = true
            if let settings = script.settings(connection.number) {
                connection.send(HostileH2Origin.frame(
                    type: 4, settings.flatMap { [UInt8($0.parameter >> 8), UInt8($0.parameter & 0xFF)] + HostileH2Origin.uint32($0.value) }))
            }
        }
        var offset = 0
        while bytes.count - offset >= 9 {
            let length = Int(bytes[offset]) << 16 | Int(bytes[offset + 1]) << 8 | Int(bytes[offset + 2])
            guard bytes.count - offset - 9 >= length else { break }
            let type = bytes[offset + 3]
            let flags = bytes[offset + 4]
            let stream = bytes[offset + 5..<offset + 9].reduce(UInt32(0)) { $0 << 8 | UInt32($1) } & 0x7FFF_FFFF
            let payload = bytes[offset + 9..<offset + 9 + length]
            offset += 9 + length
            handle(type: type, flags: flags, stream: stream, payload: payload)
        }
        bytes.removeFirst(offset)
    }

    private func handle(type: UInt8, flags: UInt8, stream: UInt32, payload: ArraySlice<UInt8>) {
        func code(at start: Int) -> UInt32? {
            guard payload.count >= start + 4 else { return nil }
            return payload.dropFirst(start).prefix(4).reduce(0) { $0 << 8 | UInt32($1) }
        }
        let errorCode = type == 3 ? code(at: 0) : type == 7 ? code(at: 4) : nil
        connection.origin.record(HostileH2Origin.ReceivedFrame(
            connection: connection.number, type: type, flags: flags, stream: stream, errorCode: errorCode))
        switch type {
        case 0:  // DATA
            var length = payload.count
            if flags & 0x8 != 0, let pad = payload.first { length -= 1 + Int(pad) }
            let request = connection.update(stream) { request in
                request.bodyBytes += length
                if flags & 0x1 != 0 { request.ended = true }
            }
            if script.grantsWindow, payload.count > 0 {
                connection.send(H2Frames.windowUpdate(0, increment: UInt32(payload.count))
                                + H2Frames.windowUpdate(stream, increment: UInt32(payload.count)))
            }
            if let request, request.ended { script.onRequest(connection, request) }
        case 1:  // HEADERS
            var block = payload
            if flags & 0x8 != 0, let pad = block.popFirst() { block = block.dropLast(Int(pad)) }
            if flags & 0x20 != 0 { block = block.dropFirst(5) }
            let (method, path) = HostileH2Origin.indexedMethodAndPath(block)
            let request = HostileH2Origin.Request(connection: connection.number, stream: stream, method: method, path: path,
                                                  ended: flags & 0x1 != 0)
            connection.add(request)
            script.onHeaders(connection, request)
            if request.ended { script.onRequest(connection, request) }
        case 3:  // RST_STREAM
            _ = connection.update(stream) { $0.resetCode = errorCode }
        case 4 where flags & 0x1 == 0:  // SETTINGS, not an ACK
            if script.acknowledgesSettings, script.settings(connection.number) != nil { connection.send(HostileH2Origin.frame(type: 4, flags: 0x1)) }
        case 6 where flags & 0x1 == 0:  // PING
            connection.send(HostileH2Origin.frame(type: 6, flags: 0x1, Array(payload)))
        default:
            break
        }
    }
}
