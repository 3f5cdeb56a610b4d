import Foundation
import ProxyModel
import XCTest

/// Many clients at once: downloads and uploads through the proxy in parallel must each get
/// their own bytes, and every exchange must be captured once.
final class ConcurrencyTests: XCTestCase {
    /// Eight parallel curl runs (six downloads of distinct sizes, two uploads) all succeed with
    /// intact bodies; eight flows are stored.
    func testParallelClientsGetTheirOwnBytes() async throws {
        try await Fixture.run { proxy, origin in
            let uploadSize = 700_000
            let file = proxy.file("parallel-upload.bin")
            try PatternBytes.writeFile(file, count: uploadSize)
            let downloadSizes = (0..<6).map { 500_000 + $0 * 1_111 }
            let port = proxy.port
            let downloadURLs = downloadSizes.map { origin.url("/bytes/\($0)") }
            let uploadURL = origin.url("/echo")
            let uploadPath = file.path

            let outcomes = try await withThrowingTaskGroup(of: (String, Bool, String).self) { group in
                for (index, url) in downloadURLs.enumerated() {
                    let size = downloadSizes[index]
                    group.addTask {
                        let fetched = try await Curl.fetch(viaProxy: port, url, timeout: 30)
                        let intact = fetched.status == 200 && fetched.body == PatternBytes.data(count: size)
                        return ("download \(size)", intact, fetched.result.summary)
                    }
                }
                for index in 0..<2 {
                    group.addTask {
                        let fetched = try await Curl.fetch(viaProxy: port, uploadURL,
                                                           ["-H", "Expect:", "--data-binary", "@\(uploadPath)"],
                                                           timeout: 30)
                        let intact = fetched.status == 200
                            && fetched.header("X-Echo-Body-Checksum") == Checksum.ofPattern(count: uploadSize).hex
                        return ("upload \(index)", intact, fetched.result.summary)
                    }
                }
                var outcomes: [(String, Bool, String)] = []
                for try await outcome in group {
                    outcomes.append(outcome)
                }
                return outcomes
            }
            XCTAssertEqual(outcomes.count, 8)
            for (name, intact, summary) in outcomes {
                XCTAssertTrue(intact, "\(name) failed: \(summary)")
            }
            let flows = try await proxy.waitForFlows(count: 8)
            XCTAssertEqual(flows.count, 8)
            XCTAssertEqual(Set(flows.filter { $0.method == "GET" }.map(\.responseBody.size)),
                           Set(downloadSizes.map(Int64.init)))
            XCTAssertEqual(flows.filter { $0.method == "POST" }.map(\.requestBody.size),
                           [Int64(uploadSize), Int64(uploadSize)])
            XCTAssertTrue(flows.allSatisfy { $0.error == nil })
        }
    }
}
