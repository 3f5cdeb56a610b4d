import Foundation
import ProxyModel

/// The bounded FIFO between the engine and the writer thread, and its drop policy, with no
/// threads and no I/O so the policy can be tested on its own.
///
/// Policy, in order:
/// 1. At `maxFlows` queued flows, a new flow is dropped whole (`flowsDropped`).
/// 2. Otherwise, when the new flow's captured body bytes would take the queue past
///    `maxBodyBytes`, its bodies are stripped (sizes kept, `truncated` set; `flowsStripped`,
///    `bodyBytesDropped`) and the flow is queued without them. Bodies go long before flows do.
/// 3. Otherwise the flow is queued as it is.
///
/// A WebSocket's messages and end travel the same queue behind their flow (`CaptureItem`), so
/// the writer always meets a flow before what follows it. They count as items against
/// `maxFlows` and their payloads against `maxBodyBytes` (payloads are stripped first, as
/// bodies are).
///
/// Not thread-safe: `CaptureWriter` guards it with its lock.
struct CaptureQueue {
    /// What `enqueue` did with a flow.
    enum Outcome: Equatable {
        case queued
        /// Queued, minus this many body bytes.
        case queuedWithoutBodies(droppedBytes: Int)
        case dropped
    }

    let maxFlows: Int
    let maxBodyBytes: Int

    /// Captured body bytes held by the queued flows.
    private(set) var queuedBodyBytes = 0
    private(set) var flowsDropped = 0
    private(set) var flowsStripped = 0
    private(set) var bodyBytesDropped = 0

    /// Message batches dropped whole because the queue was full.
    private(set) var messageBatchesDropped = 0

    /// A ring buffer: slots are set back to nil when dequeued, so a written flow's memory is
    /// released at once. It grows by doubling, up to `maxFlows` slots.
    private var slots: [CaptureItem?]
    private var head = 0
    private(set) var count = 0

    init(maxFlows: Int, maxBodyBytes: Int) {
        precondition(maxFlows > 0, "maxFlows must be positive")
        self.maxFlows = maxFlows
        self.maxBodyBytes = max(0, maxBodyBytes)
        slots = Array(repeating: nil, count: min(maxFlows, Self.initialSlots))
    }

    var isEmpty: Bool { count == 0 }
    /// Slots the ring has now.
    var capacity: Int { slots.count }

    /// Queues `flow` under the drop policy and says what happened.
    mutating func enqueue(_ flow: consuming Flow, open key: OpenFlowKey? = nil) -> Outcome {
        guard count < maxFlows else {
            flowsDropped += 1
            return .dropped
        }
        var outcome = Outcome.queued
        let bodyBytes = flow.capturedBodyBytes
        if bodyBytes > 0 && queuedBodyBytes + bodyBytes > maxBodyBytes {
            Self.stripBody(&flow.requestBody)
            Self.stripBody(&flow.responseBody)
            if var body = flow.forwardedRequest?.body {
                Self.stripBody(&body)
                flow.forwardedRequest?.body = body
            }
            if var body = flow.originResponse?.body {
                Self.stripBody(&body)
                flow.originResponse?.body = body
            }
            flowsStripped += 1
            bodyBytesDropped += bodyBytes
            outcome = .queuedWithoutBodies(droppedBytes: bodyBytes)
        } else {
            queuedBodyBytes += bodyBytes
        }
        append(.flow(flow, open: key))
        return outcome
    }

    /// Queues messages of an open flow: dropped when the queue is full, their payloads stripped
    /// when over the byte budget.
    mutating func enqueue(_ messages: [CapturedMessage], to key: OpenFlowKey) -> Outcome {
        guard count < maxFlows else {
            messageBatchesDropped += 1
            return .dropped
        }
        var messages = messages
        let bytes = Self.payloadBytes(messages)
        var outcome = Outcome.queued
        if bytes > 0 && queuedBodyBytes + bytes > maxBodyBytes {
            for index in messages.indices where !messages[index].payload.isEmpty {
                messages[index].payload = Data()
                messages[index].truncated = true
            }
            bodyBytesDropped += bytes
            outcome = .queuedWithoutBodies(droppedBytes: bytes)
        } else {
            queuedBodyBytes += bytes
        }
        append(.messages(messages, key))
        return outcome
    }

    /// Queues the end of an open flow. Never dropped while there is room: a full queue drops it
    /// (the flow then keeps the counts it had).
    mutating func enqueue(end: OpenFlowEnd, of key: OpenFlowKey) -> Outcome {
        guard count < maxFlows else { return .dropped }
        append(.end(end, key))
        return .queued
    }

    private mutating func append(_ item: consuming CaptureItem) {
        if count == slots.count { grow() }
        slots[(head + count) % slots.count] = item
        count += 1
    }

    /// Removes and returns up to `maxCount` items, oldest first.
    mutating func dequeueItems(maxCount: Int) -> [CaptureItem] {
        let taken = min(maxCount, count)
        var batch: [CaptureItem] = []
        batch.reserveCapacity(taken)
        for _ in 0..<taken {
            guard let item = slots[head].take() else { preconditionFailure("empty slot inside the queue") }
            head = (head + 1) % slots.count
            queuedBodyBytes -= item.capturedBytes
            batch.append(item)
        }
        count -= taken
        if count == 0 { head = 0 }
        return batch
    }

    /// Removes and returns up to `maxCount` items, oldest first, keeping only the flows.
    mutating func dequeueBatch(maxCount: Int) -> [Flow] {
        dequeueItems(maxCount: maxCount).compactMap { item in
            if case .flow(let flow, _) = item { return flow }
            return nil
        }
    }

    /// Slots the ring starts with, and goes back to once empty (`releaseSpareCapacity`).
    static let initialSlots = 256

    /// An empty queue gives back the slots a burst grew it to (a pointer each: the items are
    /// boxed). Called when the writer is idle, not after every batch, so
    /// steady traffic does not grow the ring again and again.
    mutating func releaseSpareCapacity() {
        guard count == 0, slots.count > Self.initialSlots else { return }
        slots = Array(repeating: nil, count: min(maxFlows, Self.initialSlots))
        head = 0
    }

    private mutating func grow() {
        let newCapacity = min(maxFlows, max(slots.count * 2, 1))
        var newSlots = [CaptureItem?](repeating: nil, count: newCapacity)
        for offset in 0..<count {
            newSlots[offset] = slots[(head + offset) % slots.count]
        }
        slots = newSlots
        head = 0
    }

    static func payloadBytes(_ messages: [CapturedMessage]) -> Int {
        messages.reduce(0) { $0 + $1.payload.count }
    }

    private static func stripBody(_ body: inout CapturedBody) {
        guard body.storedCount > 0 else { return }
        body.bytes = Data()
        body.truncated = true
    }
}

/// What the capture queue carries to the writer, in order: a flow (with its key when messages
/// will follow it), messages of an open flow, or the end of one. Public for `CaptureBackend`s.
///
/// Indirect, so a queue slot is one pointer: inline, every slot of the ring took a whole `Flow`
/// (about 500 bytes), and a burst that grew the ring to 4,096 slots held 2 MiB of them (the
/// largest item of the proxy's heap at its peak under keep-alive load).
public indirect enum CaptureItem: Sendable {
    case flow(Flow, open: OpenFlowKey?)
    case messages([CapturedMessage], OpenFlowKey)
    case end(OpenFlowEnd, OpenFlowKey)

    /// Captured bytes it holds (bodies, payloads).
    public var capturedBytes: Int {
        switch self {
        case .flow(let flow, _): return flow.capturedBodyBytes
        case .messages(let messages, _): return CaptureQueue.payloadBytes(messages)
        case .end: return 0
        }
    }

    /// Bytes it adds to the write-ahead log: bodies in `BodyFileStore` files do not count.
    var loggedBytes: Int {
        guard case .flow(let flow, _) = self else { return capturedBytes }
        func inline(_ body: CapturedBody?) -> Int {
            guard let body, !BodyFileStore.storesExternally(body) else { return 0 }
            return body.storedCount
        }
        return inline(flow.requestBody) + inline(flow.responseBody) + inline(flow.forwardedRequest?.body)
            + inline(flow.originResponse?.body)
    }
}
