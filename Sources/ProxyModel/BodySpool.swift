import Foundation

/// Where a live capture sends a large body's bytes while the exchange is still running, so the
/// body does not wait in memory for the capture writer.
///
/// A 10 MiB download used to sit in the proxy's memory whole, from its first byte until the
/// writer stored it: memory grew with every concurrent download and with the body cap. A body
/// that reaches `CapturedBody.blockSize` bytes hands each full block to its spool instead
/// (`CapturedBody.startSpooling(_:)`), which writes it off the event loop; at most one block per
/// body stays in memory. The capture store provides the spool (its body files) and claims it
/// when the flow is written.
public protocol BodySpool: AnyObject, Sendable {
    /// Takes a block of the body, in order. False when the spool takes no more (its writes are
    /// behind, or failed): the body keeps what was taken before and is marked truncated.
    func append(_ block: Data) -> Bool
    /// No more blocks come.
    func finish()
    /// The bytes taken so far, once written: for readers other than the capture writer (tests,
    /// a sink that keeps flows in memory). Waits for the spool's writes, never for `finish()`.
    func contents() -> Data
    /// The first `limit` bytes taken so far, once written (the full-text index reads a body's start).
    func contents(upTo limit: Int) -> Data
}

extension BodySpool {
    public func contents(upTo limit: Int) -> Data {
        contents().prefix(limit)
    }
}
