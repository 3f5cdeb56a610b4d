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

    /// A ring buffer: slots are set back to nil when dequeued, so a written flow's memory is
    /// released at once. It grows by doubling, up to `maxFlows` slots.
    private var slots: [Flow?]
    private var head = 0
    private(set) var count = 0

    init(maxFlows: Int, maxBodyBytes: Int) {
        precondition(maxFlows > 0, "maxFlows must be positive")
        self.maxFlows = maxFlows
        self.maxBodyBytes = max(0, maxBodyBytes)
        slots = Array(repeating: nil, count: min(maxFlows, 1024))
    }

    var isEmpty: Bool { count == 0 }

    /// Queues `flow` under the drop policy and says what happened.
    mutating func enqueue(_ flow: Flow) -> Outcome {
        guard count < maxFlows else {
            flowsDropped += 1
            return .dropped
        }
        var flow = flow
        var outcome = Outcome.queued
        let bodyBytes = Self.bodyBytes(of: flow)
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
        if count == slots.count { grow() }
        slots[(head + count) % slots.count] = flow
        count += 1
        return outcome
    }

    /// Removes and returns up to `maxCount` flows, oldest first.
    mutating func dequeueBatch(maxCount: Int) -> [Flow] {
        let taken = min(maxCount, count)
        var batch: [Flow] = []
        batch.reserveCapacity(taken)
        for _ in 0..<taken {
            guard let flow = slots[head] else { preconditionFailure("empty slot inside the queue") }
            slots[head] = nil
            head = (head + 1) % slots.count
            queuedBodyBytes -= Self.bodyBytes(of: flow)
            batch.append(flow)
        }
        count -= taken
        if count == 0 { head = 0 }
        return batch
    }

    private mutating func grow() {
        let newCapacity = min(maxFlows, max(slots.count * 2, 1))
        var newSlots = [Flow?](repeating: nil, count: newCapacity)
        for offset in 0..<count {
            newSlots[offset] = slots[(head + offset) % slots.count]
        }
        slots = newSlots
        head = 0
    }

    private static func bodyBytes(of flow: Flow) -> Int {
        flow.capturedBodyBytes
    }

    private static func stripBody(_ body: inout CapturedBody) {
        guard !body.bytes.isEmpty else { return }
        body.bytes = Data()
        body.truncated = true
    }
}
