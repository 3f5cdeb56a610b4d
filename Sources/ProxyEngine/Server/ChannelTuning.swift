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
}
