import FlowExport
import Foundation
import ProxyModel

/// A `ByteOutput` that keeps everything in memory, for reading an export back in tests.
final class MemoryOutput: ByteOutput {
    private(set) var data = Data()
    private(set) var flushCount = 0

    func write(_ bytes: UnsafeRawBufferPointer) throws {
        data.append(contentsOf: bytes)
    }

    func flush() throws {
        flushCount += 1
    }

    var text: String { String(decoding: data, as: UTF8.self) }
}

/// Writes flows with a `HARWriter` into memory and returns the document.
func exportHAR(_ flows: [Flow], redaction: Bool = false) throws -> Data {
    let output = MemoryOutput()
    let writer = try HARWriter(output: output, creator: HARCreator(name: "ProxyApp", version: "test"),
                               pageStarted: Date(timeIntervalSince1970: 1_795_000_000), pageTitle: "Capture",
                               redaction: redaction)
    for flow in flows { try writer.write(flow) }
    try writer.finish()
    return output.data
}

/// The entries of a HAR document, parsed.
func harEntries(_ data: Data) throws -> [[String: Any]] {
    let root = try JSONSerialization.jsonObject(with: data) as? [String: Any]
    let log = root?["log"] as? [String: Any]
    return log?["entries"] as? [[String: Any]] ?? []
}
