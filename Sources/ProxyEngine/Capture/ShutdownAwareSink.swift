import NIOConcurrencyHelpers
import ProxyModel

/// The engine's flow sink: hands every flow on, and once the proxy is stopping (SIGTERM,
/// Ctrl-C) says so on the flows that end with an error then.
///
/// Stopping closes every connection, and each exchange or tunnel records its flow with the
/// reason it saw ("client closed the connection…", "the origin closed…"): true from where it
/// stands, misleading in the capture, since neither side did. One flag here, set by
/// `ProxyServer.stop()`, corrects them all without each exchange knowing about shutdown.
final class ShutdownAwareSink: FlowSink, Sendable {
    private let base: any FlowSink
    private let stopping = NIOLockedValueBox(false)

    static let reason = "the proxy was shut down (SIGTERM or Ctrl-C) before the exchange completed"

    init(_ base: any FlowSink) {
        self.base = base
    }

    /// From now on, flows that end with an error say the proxy was shut down.
    /// The proxy is stopping: nothing new (a replay) may start on its event loops.
    var isStopping: Bool { stopping.withLockedValue { $0 } }

    func stop() {
        stopping.withLockedValue { $0 = true }
    }

    func recordOpen(_ flow: Flow) -> OpenFlowKey? {
        base.recordOpen(flow)
    }

    func append(_ messages: [CapturedMessage], to key: OpenFlowKey) {
        base.append(messages, to: key)
    }

    func finish(_ key: OpenFlowKey, with end: OpenFlowEnd) {
        base.finish(key, with: end)
    }

    func record(_ flow: consuming Flow) {
        guard flow.error != nil, stopping.withLockedValue({ $0 }) else {
            base.record(flow)
            return
        }
        if let seen = flow.error, seen != Self.reason {
            flow.note = flow.note.map { "\($0); as the exchange saw it: \(seen)" } ?? "as the exchange saw it: \(seen)"
        }
        flow.error = Self.reason
        base.record(flow)
    }
}
