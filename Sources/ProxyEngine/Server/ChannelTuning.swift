import NIOCore

/// Socket settings shared by client and upstream channels, tuned for relaying.
///
/// NIO's defaults (reads of at most 64 KiB, a 64 KiB high-water mark) cap a relay well below
/// what loopback can carry; these let a large download move in bigger steps while the adaptive
/// allocator keeps small exchanges small.
enum ChannelTuning {
    static let receiveAllocator = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 256 << 10)
    static let writeWaterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 128 << 10, high: 512 << 10)
    /// `TCP_NODELAY`, at level `IPPROTO_TCP`. NIO's `.socketOption(.tcp_nodelay)` means level
    /// `SOL_SOCKET`, where option 1 is `SO_DEBUG`: that needs `CAP_NET_ADMIN`, so run by anyone
    /// but root the proxy closed every accepted connection and failed every origin connect.
    static let noDelay = ChannelOptions.tcpOption(.tcp_nodelay)
    /// Socket reads per read cycle on a channel and on one with TLS (`boundTLSReads`).
    static let maxMessagesPerRead: UInt = 16
    static let tlsMaxMessagesPerRead: UInt = 2

    /// NIOSSL decrypts everything read before `channelReadComplete` into one plaintext buffer,
    /// and keeps that buffer at its largest size for the connection's life. With 16 reads of up
    /// to 256 KiB, one download grew it to 4 MiB (an 8 MiB allocation) on each side of every
    /// HTTPS connection, pooled ones included; two reads per cycle bound it at 512 KiB.
    /// Never raises a lower bound (a throttled channel reads once per cycle).
    static func boundTLSReads(on channel: any Channel) throws {
        guard let options = channel.syncOptions else { return }
        let current = try options.getOption(.maxMessagesPerRead)
        try options.setOption(.maxMessagesPerRead, value: min(current, tlsMaxMessagesPerRead))
    }

    /// Body bytes an exchange moves on a channel before `releaseReadBuffers` is worth a call.
    static let largeTransfer = 256 << 10

    /// NIO keeps a pool of receive buffers per channel, as many as reads per cycle, each as
    /// large as the allocator ever made it, for the channel's whole life: a relayed download
    /// left 16 buffers of 256 KiB (4 MiB) on its upstream connection while it idled in the
    /// pool. Shrinking the pool's capacity to one and back lets the others go; the channel grows
    /// them again if the next transfer needs them. Called after an exchange that moved at least
    /// `largeTransfer` body bytes on the channel.
    ///
    /// Only NIOPosix's socket channels have the pool; the others (HTTP/2 streams, test channels)
    /// stop the process on an option they do not know, so they are left alone.
    /// Returns whether the pool was shrunk.
    @discardableResult
    static func releaseReadBuffers(on channel: any Channel) -> Bool {
        guard String(describing: type(of: channel)) == "SocketChannel",
              let options = channel.syncOptions, let current = try? options.getOption(.maxMessagesPerRead),
              current > 1 else { return false }
        try? options.setOption(.maxMessagesPerRead, value: 1)
        try? options.setOption(.maxMessagesPerRead, value: current)
        return true
    }
}
