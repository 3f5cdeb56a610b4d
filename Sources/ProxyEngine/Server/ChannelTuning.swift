import NIOCore

/// Socket settings shared by client and upstream channels, tuned for relaying.
///
/// NIO's defaults (reads of at most 64 KiB, a 64 KiB high-water mark) cap a relay well below
/// what loopback can carry; these let a large download move in bigger steps while the adaptive
/// allocator keeps small exchanges small.
enum ChannelTuning {
    static let receiveAllocator = AdaptiveRecvByteBufferAllocator(minimum: 64, initial: 2048, maximum: 256 << 10)
    static let writeWaterMark = ChannelOptions.Types.WriteBufferWaterMark(low: 128 << 10, high: 512 << 10)
}
