import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
#if canImport(Glibc)
import Glibc
#endif

/// A UDP server on 127.0.0.1 that sends every datagram back to its sender, prefixed with
/// `prefix`: the destination of SOCKS5 UDP relays. It counts what it received.
final class UDPEchoServer: Sendable {
    let port: Int
    private let group: MultiThreadedEventLoopGroup
    private let channel: any Channel
    private let received: NIOLockedValueBox<Int>

    private init(port: Int, group: MultiThreadedEventLoopGroup, channel: any Channel, received: NIOLockedValueBox<Int>) {
        self.port = port
        self.group = group
        self.channel = channel
        self.received = received
    }

    static func start(prefix: String = "echo:") async throws -> UDPEchoServer {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let received = NIOLockedValueBox(0)
        do {
            let channel = try await DatagramBootstrap(group: group)
                .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: 65_536))
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(UDPEchoHandler(prefix: prefix, received: received))
                    }
                }
                .bind(host: "127.0.0.1", port: 0)
                .get()
            guard let port = channel.localAddress?.port else { throw ChannelError.unknownLocalAddress }
            return UDPEchoServer(port: port, group: group, channel: channel, received: received)
        } catch {
            try? await group.shutdownGracefully()
            throw error
        }
    }

    var datagramsReceived: Int { received.withLockedValue { $0 } }

    func shutdown() async {
        try? await channel.close()
        try? await group.shutdownGracefully()
    }
}

private final class UDPEchoHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    private let prefix: String
    private let received: NIOLockedValueBox<Int>

    init(prefix: String, received: NIOLockedValueBox<Int>) {
        self.prefix = prefix
        self.received = received
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var envelope = unwrapInboundIn(data)
        received.withLockedValue { $0 += 1 }
        var answer = context.channel.allocator.buffer(string: prefix)
        answer.writeBuffer(&envelope.data)
        context.writeAndFlush(wrapOutboundOut(AddressedEnvelope(remoteAddress: envelope.remoteAddress, data: answer)),
                              promise: nil)
    }
}

/// A blocking IPv4 UDP socket bound to 127.0.0.1 (or another address of this machine), for the
/// client side of a relay; every receive has a deadline.
final class UDPClientSocket {
    private let fd: Int32
    let port: Int
    private let host: String

    init(host: String = "127.0.0.1") throws {
        self.host = host
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        guard fd >= 0 else { throw RawClient.SocketError(description: "socket: errno \(errno)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            Glibc.close(fd)
            throw RawClient.SocketError(description: "bind: errno \(errno)")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit { Glibc.close(fd) }

    /// Sends to `port` on the address this socket is bound to.
    func send(_ bytes: Data, toPort port: Int) {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr(host)
        address.sin_port = UInt16(port).bigEndian
        _ = bytes.withUnsafeBytes { buffer in
            withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(fd, buffer.baseAddress, buffer.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    /// The next datagram, or nil after `timeout` seconds.
    func receive(timeout: TimeInterval) -> Data? {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&descriptor, 1, Int32(timeout * 1000)) > 0 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count >= 0 ? Data(buffer[0..<count]) : nil
    }
}
