import FlowExport
import Foundation
import HARValidation
import ProxyModel
import XCTest

/// Many flows stream into one valid document, entry by entry.
final class HARStreamingTests: XCTestCase {
    func testFiveThousandFlowsStreamIntoOneValidDocument() throws {
        let output = MemoryOutput()
        let writer = try HARWriter(output: output, creator: HARCreator(name: "ProxyApp", version: "test"),
                                   pageStarted: SampleFlows.started, pageTitle: "many", redaction: false)
        let samples = SampleFlows.all
        var sizeAfterFirstThousand = 0
        for index in 0..<5000 {
            var flow = samples[index % samples.count]
            flow.id = Int64(index + 1)
            try writer.write(flow)
            if index == 999 { sizeAfterFirstThousand = output.data.count }
        }
        XCTAssertGreaterThan(sizeAfterFirstThousand, 0, "entries reach the output before finish")
        try writer.finish()
        XCTAssertEqual(writer.entryCount, 5000)
        XCTAssertEqual(HARValidator.problems(in: output.data), [])
        let entries = try harEntries(output.data)
        XCTAssertEqual(entries.count, 5000)
        XCTAssertEqual(entries.map { $0["_id"] as? Int }, (1...5000).map { $0 })
    }

    func testFileOutputWritesTheDocumentToAFile() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("har-\(UUID().uuidString).har").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let output = try FileOutput(creatingFileAt: path)
        let writer = try HARWriter(output: output, creator: HARCreator(name: "ProxyApp", version: "test"),
                                   pageStarted: SampleFlows.started, pageTitle: "file", redaction: false)
        // A body bigger than the 64 KiB buffers, so writes pass through in pieces.
        var big = SampleFlows.image
        big.responseBody = SampleFlows.body((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        for flow in SampleFlows.all + [big] { try writer.write(flow) }
        try writer.finish()
        try output.close()
        try output.close()
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        XCTAssertEqual(HARValidator.problems(in: data), [])
        let content = try harEntries(data).last?["response"] as? [String: Any]
        let text = (content?["content"] as? [String: Any])?["text"] as? String
        XCTAssertEqual(text.flatMap { Data(base64Encoded: $0) }, big.responseBody.bytes)
    }

    func testFileOutputNamesThePathItCannotCreate() {
        XCTAssertThrowsError(try FileOutput(creatingFileAt: "/nonexistent-dir/out.har")) { error in
            XCTAssertEqual("\(error)", "cannot create '/nonexistent-dir/out.har': No such file or directory")
        }
    }
}

/// `HARWriter.write(contentsOf:)` renders a batch in parallel and must produce exactly the
/// bytes that writing the same flows one by one does, in the same order.
final class HARBatchWritingTests: XCTestCase {
    func testBatchOutputEqualsOneByOne() throws {
        var flows: [Flow] = []
        for index in 0..<300 {
            var flow = Flow(host: "h\(index % 7).test", path: "/item/\(index)?q=\(index)",
                            requestHeaders: [HeaderField(name: "Cookie", value: "a=\(index); token=t\(index)")],
                            status: index % 5 == 0 ? nil : 200,
                            responseHeaders: [HeaderField(name: "Content-Type", value: index % 3 == 0 ? "image/png" : "text/plain")],
                            responseBody: CapturedBody(bytes: Data((0..<(index * 13 % 4_000)).map { UInt8(truncatingIfNeeded: $0 &* index) }),
                                                       size: Int64(index * 13 % 4_000)))
            if flow.status == nil { flow.error = "refused \(index)" }
            flows.append(flow)
        }
        for redaction in [false, true] {
            let oneByOne = try exportHAR(flows, redaction: redaction)
            let output = MemoryOutput()
            let writer = try HARWriter(output: output, creator: HARCreator(name: "ProxyApp", version: "test"),
                                       pageStarted: Date(timeIntervalSince1970: 1_795_000_000), pageTitle: "Capture",
                                       redaction: redaction)
            try writer.write(contentsOf: Array(flows[0..<1]))
            try writer.write(contentsOf: [])
            try writer.write(contentsOf: Array(flows[1..<200]))
            try writer.write(contentsOf: Array(flows[200...]))
            try writer.finish()
            XCTAssertEqual(writer.entryCount, flows.count)
            XCTAssertEqual(output.data, oneByOne, "redaction: \(redaction)")
        }
    }
}
