/// Inflates permessage-deflate (RFC 7692) payloads for `WebSocketFrameReader`, one direction's
/// messages in order.
///
/// Why a protocol: ProxyCore decides without I/O and links no C library, while inflating needs
/// zlib. The zlib implementation is `BodyCodec.WebSocketInflater` (beside the other bounded
/// decoders, over `CZlib`); it has exactly these methods, so whoever sees both modules (the
/// engine, the tests) declares the conformance in one line. BodyCodec stays free of ProxyCore.
///
/// Contract, for each message: `inflate` with its compressed bytes as they arrive (any number of
/// calls, any sizes), then either `finishMessage` (the message ended; the implementation appends
/// the 0x00 0x00 0xff 0xff RFC 7692 §7.2.2 removed, and forgets the window when that peer's
/// `*_no_context_takeover` was negotiated) or `abandonMessage` (the reader stopped inflating it).
/// `output` never grows past `limit` bytes: a decompression bomb costs at most `limit` bytes plus
/// the implementation's fixed working buffer. A message abandoned while context takeover is in
/// effect leaves a window the next messages depend on incomplete, so those then fail (throw)
/// rather than inflate into wrong bytes.
public protocol WebSocketPayloadInflating: AnyObject {
    /// Inflates the next compressed bytes of the current message, appending to `output` while it
    /// holds fewer than `limit` bytes. Returns false when more output was due than `limit` allowed
    /// (the caller then abandons the message). Throws when the data is not valid deflate.
    func inflate(_ compressed: ArraySlice<UInt8>, into output: inout [UInt8], limit: Int) throws -> Bool

    /// Ends the current message: inflates the tail RFC 7692 removed and makes ready for the next
    /// message. Same result and throws as `inflate`.
    func finishMessage(into output: inout [UInt8], limit: Int) throws -> Bool

    /// Gives up the current message (limit reached or data corrupt); the next `inflate` starts the
    /// next message.
    func abandonMessage()
}
