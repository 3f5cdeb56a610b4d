import CaptureTestSupport
import Foundation
import ProxyModel
import XCTest

@testable import CaptureStore

final class CaptureQueueTests: XCTestCase {
    /// Batches come out oldest first, at most `maxCount` at a time, across ring wrap-around and
    /// growth.
    func testBatchesAreFIFO() {
        var queue = CaptureQueue(maxFlows: 5_000, maxBodyBytes: 1 << 20)
        var next = 0
        var expected = 0
        // Interleave enqueues and dequeues so the ring wraps and grows past its first slots.
        for round in 0..<6 {
            for _ in 0..<(700 + round * 100) {
                XCTAssertEqual(queue.enqueue(Samples.flow(next)), .queued)
                next += 1
            }
            let batch = queue.dequeueBatch(maxCount: 450)
            XCTAssertEqual(batch.map(\.path), (expected..<expected + batch.count).map { "/item/\($0)" })
            expected += batch.count
        }
        while !queue.isEmpty {
            let batch = queue.dequeueBatch(maxCount: 512)
            XCTAssertLessThanOrEqual(batch.count, 512)
            XCTAssertEqual(batch.map(\.path), (expected..<expected + batch.count).map { "/item/\($0)" })
            expected += batch.count
        }
        XCTAssertEqual(expected, next)
        XCTAssertEqual(queue.dequeueBatch(maxCount: 10), [])
        XCTAssertEqual(queue.flowsDropped, 0)
    }

    /// The slots a burst grew the ring to are given back once it is empty (the writer asks when
    /// idle), never while it holds flows; it grows again, in order, for the next burst.
    func testAnEmptyQueueGivesBackTheSlotsABurstGrew() {
        var queue = CaptureQueue(maxFlows: 5_000, maxBodyBytes: 1 << 20)
        XCTAssertEqual(queue.capacity, CaptureQueue.initialSlots)
        for index in 0..<3_000 { _ = queue.enqueue(Samples.flow(index)) }
        XCTAssertGreaterThanOrEqual(queue.capacity, 3_000)
        _ = queue.dequeueBatch(maxCount: 2_999)
        queue.releaseSpareCapacity()
        XCTAssertGreaterThanOrEqual(queue.capacity, 3_000, "one flow still queued: nothing given back")
        XCTAssertEqual(queue.dequeueBatch(maxCount: 10).map(\.path), ["/item/2999"])
        queue.releaseSpareCapacity()
        XCTAssertEqual(queue.capacity, CaptureQueue.initialSlots)
        for index in 0..<600 { _ = queue.enqueue(Samples.flow(index)) }
        XCTAssertEqual(queue.dequeueBatch(maxCount: 600).map(\.path), (0..<600).map { "/item/\($0)" })
    }

    /// A slot of the ring is one pointer, however large a flow is: the ring a burst grows to
    /// costs little more than the flows it holds.
    func testASlotIsAPointerNotAFlow() {
        XCTAssertGreaterThan(MemoryLayout<Flow>.size, 100)
        XCTAssertEqual(MemoryLayout<CaptureItem?>.stride, MemoryLayout<UnsafeRawPointer>.stride)
    }

    /// Over the body budget a new flow loses its bodies (sizes kept, truncated set) but is still
    /// queued; the counters say exactly how many flows and bytes.
    func testBodiesAreStrippedBeforeFlowsAreDropped() {
        var queue = CaptureQueue(maxFlows: 10, maxBodyBytes: 2_500)
        XCTAssertEqual(queue.enqueue(Samples.flow(0, bodyBytes: 1_000)), .queued)
        XCTAssertEqual(queue.enqueue(Samples.flow(1, bodyBytes: 1_000)), .queued)
        XCTAssertEqual(queue.queuedBodyBytes, 2_000)

        var both = Samples.flow(2, bodyBytes: 600)
        both.requestBody = CapturedBody(bytes: Data(repeating: 1, count: 300), size: 900, truncated: true)
        XCTAssertEqual(queue.enqueue(both), .queuedWithoutBodies(droppedBytes: 900))
        // A flow without bodies, and one small enough to fit, still go in untouched.
        XCTAssertEqual(queue.enqueue(Samples.flow(3)), .queued)
        XCTAssertEqual(queue.enqueue(Samples.flow(4, bodyBytes: 500)), .queued)
        XCTAssertEqual(queue.queuedBodyBytes, 2_500)
        XCTAssertEqual(queue.enqueue(Samples.flow(5, bodyBytes: 1)), .queuedWithoutBodies(droppedBytes: 1))

        XCTAssertEqual(queue.flowsStripped, 2)
        XCTAssertEqual(queue.bodyBytesDropped, 901)
        XCTAssertEqual(queue.flowsDropped, 0)
        XCTAssertEqual(queue.count, 6)

        let batch = queue.dequeueBatch(maxCount: 10)
        XCTAssertEqual(batch.count, 6)
        let stripped = batch[2]
        XCTAssertEqual(stripped.requestBody, CapturedBody(bytes: Data(), size: 900, truncated: true))
        XCTAssertEqual(stripped.responseBody, CapturedBody(bytes: Data(), size: 600, truncated: true))
        XCTAssertEqual(batch[3].responseBody, .empty)
        XCTAssertEqual(batch[4].responseBody.bytes.count, 500)
        XCTAssertEqual(batch[5].responseBody, CapturedBody(bytes: Data(), size: 1, truncated: true))
        XCTAssertEqual(queue.queuedBodyBytes, 0)

        // Dequeuing frees the budget again.
        XCTAssertEqual(queue.enqueue(Samples.flow(6, bodyBytes: 2_500)), .queued)
    }

    /// A single flow larger than the whole budget is stored without bodies, never dropped.
    func testOversizedBodyOnEmptyQueueIsStripped() {
        var queue = CaptureQueue(maxFlows: 3, maxBodyBytes: 100)
        XCTAssertEqual(queue.enqueue(Samples.flow(0, bodyBytes: 101)),
                       .queuedWithoutBodies(droppedBytes: 101))
        XCTAssertEqual(queue.count, 1)
    }

    /// The origin side's bodies (a rule changed the flow) count against the budget and are
    /// stripped with the others: a rewrite cannot double what the queue holds unseen.
    func testOriginSideBodiesCountAndAreStripped() {
        var flow = Samples.flow(0, bodyBytes: 40)
        flow.forwardedRequest = ForwardedRequest(method: "GET", scheme: "http", host: "b.test", port: 80, path: "/",
                                                 headers: [], body: CapturedBody(bytes: Data(count: 30), size: 30))
        flow.originResponse = OriginResponse(status: 200, reason: nil, headers: [],
                                             body: CapturedBody(bytes: Data(count: 50), size: 50))
        XCTAssertEqual(flow.capturedBodyBytes, 120)
        var queue = CaptureQueue(maxFlows: 3, maxBodyBytes: 100)
        XCTAssertEqual(queue.enqueue(flow), .queuedWithoutBodies(droppedBytes: 120))
        let stored = queue.dequeueBatch(maxCount: 1)[0]
        XCTAssertEqual(stored.capturedBodyBytes, 0)
        XCTAssertEqual(stored.forwardedRequest?.body, CapturedBody(bytes: Data(), size: 30, truncated: true))
        XCTAssertEqual(stored.originResponse?.body, CapturedBody(bytes: Data(), size: 50, truncated: true))
        var fits = CaptureQueue(maxFlows: 3, maxBodyBytes: 120)
        XCTAssertEqual(fits.enqueue(flow), .queued)
        XCTAssertEqual(fits.queuedBodyBytes, 120)
    }

    /// At the flow limit new flows are dropped whole and counted; older queued flows are kept,
    /// and room frees up as batches leave.
    func testFlowsAreDroppedAtTheFlowLimit() {
        var queue = CaptureQueue(maxFlows: 3, maxBodyBytes: 1 << 20)
        for index in 0..<3 {
            XCTAssertEqual(queue.enqueue(Samples.flow(index, bodyBytes: 10)), .queued)
        }
        XCTAssertEqual(queue.enqueue(Samples.flow(3, bodyBytes: 10)), .dropped)
        XCTAssertEqual(queue.enqueue(Samples.flow(4)), .dropped)
        XCTAssertEqual(queue.flowsDropped, 2)
        XCTAssertEqual(queue.flowsStripped, 0)
        XCTAssertEqual(queue.bodyBytesDropped, 0)
        XCTAssertEqual(queue.queuedBodyBytes, 30)

        XCTAssertEqual(queue.dequeueBatch(maxCount: 2).map(\.path), ["/item/0", "/item/1"])
        XCTAssertEqual(queue.enqueue(Samples.flow(5)), .queued)
        XCTAssertEqual(queue.dequeueBatch(maxCount: 5).map(\.path), ["/item/2", "/item/5"])
        XCTAssertEqual(queue.flowsDropped, 2)
    }
}
