import Foundation

/// A message body as stored: the first bytes up to the capture cap, the full size that crossed
/// the proxy, and whether bytes were left out.
///
/// Bodies are captured raw (still content-encoded, as sent) so exports can reproduce the exchange
/// exactly; decoding belongs to the codec layer.
public struct CapturedBody: Sendable, Hashable {
    /// The stored prefix of the body.
    public var bytes: Data
    /// How many body bytes crossed the proxy in total.
    public var size: Int64
    /// True when `bytes` holds less than `size` bytes (capture cap, or dropped under load).
    public var truncated: Bool

    public init(bytes: Data = Data(), size: Int64 = 0, truncated: Bool = false) {
        self.bytes = bytes
        self.size = size
        self.truncated = truncated
    }

    public static let empty = CapturedBody()
}
