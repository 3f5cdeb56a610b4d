import CaptureStore
import CaptureTestSupport
import XCTest

/// The local capture keeps the contract every store keeps (`checkFlowStoreContract`; the shared
/// store runs the same checks in SharedCaptureTests).
final class FlowStoreContractTests: XCTestCase {
    func testTheLocalCaptureKeepsTheContract() throws {
        let repository = try makeRepository()
        let writer = CaptureWriter(repository: repository, limits: .init(maxBatchDelay: .milliseconds(5)),
                                   logger: CapturingLogHandler().logger)
        defer { writer.close() }
        try checkFlowStoreContract(repository, pins: repository, writer: writer)
    }
}
