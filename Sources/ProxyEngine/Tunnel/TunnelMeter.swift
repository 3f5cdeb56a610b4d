import Foundation
import NIOCore
import ProxyModel

/// What watches the bytes of a relay besides counting them (`WebSocketCapture`): each chunk read
/// on either side, before it is forwarded, and the end of each read.
protocol RelayObserver: AnyObject {
    func observe(_ buffer: ByteBuffer, direction: TunnelMeter.Direction)
    func readComplete()
}

/// Counts the bytes a relay carries each way and reports once when both sides have closed.
///
/// Shared by a pair of `GlueHandler`s on one event loop; not thread-safe.
final class TunnelMeter {
    enum Direction {
        /// Client to server.
        case up
        /// Server to client.
        case down
    }

    private(set) var bytesUp: Int64 = 0
    private(set) var bytesDown: Int64 = 0
    /// The first error either side saw, and that side.
    private(set) var firstError: (error: any Error, direction: Direction)?
    private var openSides = 2
    private var onFinished: ((TunnelMeter) -> Void)?
    /// Sees every chunk; strong (the meter lives as long as the relay, and so must it).
    let observer: (any RelayObserver)?

    init(observer: (any RelayObserver)? = nil, onFinished: @escaping (TunnelMeter) -> Void) {
        self.observer = observer
        self.onFinished = onFinished
    }

    /// A chunk read on the `direction` side's channel, about to be forwarded.
    func carried(_ buffer: ByteBuffer, direction: Direction) {
        switch direction {
        case .up: bytesUp += Int64(buffer.readableBytes)
        case .down: bytesDown += Int64(buffer.readableBytes)
        }
        observer?.observe(buffer, direction: direction)
    }

    func readComplete() {
        observer?.readComplete()
    }

    func noteError(_ error: any Error, direction: Direction) {
        if firstError == nil { firstError = (error, direction) }
    }

    func sideClosed() {
        openSides -= 1
        if openSides == 0, let onFinished {
            self.onFinished = nil
            onFinished(self)
        }
    }

    /// A meter that finishes `flow` with the byte counts (and the first error) and hands it to
    /// `sink` when the relay is over.
    static func recording(_ flow: Flow, to sink: any FlowSink) -> TunnelMeter {
        TunnelMeter { meter in
            var flow = flow
            flow.bytesUp = meter.bytesUp
            flow.bytesDown = meter.bytesDown
            flow.finishedAt = Date()
            if let (error, direction) = meter.firstError {
                // The client's glue carries data up, the server's down.
                let peer: SystemErrorText.Peer = direction == .up ? .client : .server
                if endsOrdinarily(error, direction: direction, bytesUp: meter.bytesUp, bytesDown: meter.bytesDown) {
                    let said = "the client ended the tunnel with a reset after the server had answered (usual for TLS clients that close with data unread)"
                    flow.note = flow.note.map { "\($0); \(said)" } ?? said
                } else {
                    flow.finishFailedTunnel(because: "tunnel closed with an error: \(SystemErrorText.describe(error, peer: peer))",
                                            at: flow.finishedAt ?? Date())
                }
            }
            sink.record(flow)
        }
    }

    /// Whether a relay that saw `error` still did its job: the client reset or broke the connection
    /// after bytes went both ways. curl and most TLS stacks close with the server's session tickets
    /// unread, so their kernel answers with a reset — recording every such tunnel as failed made
    /// ordinary pinned or `--no-intercept` traffic read `ERR`. A reset from the server, or before
    /// the server said anything, stays a failure: the client may not have got what it asked for.
    static func endsOrdinarily(_ error: any Error, direction: Direction, bytesUp: Int64, bytesDown: Int64) -> Bool {
        guard direction == .up, bytesUp > 0, bytesDown > 0, let error = error as? IOError else { return false }
        return error.errnoCode == ECONNRESET || error.errnoCode == EPIPE
    }
}
