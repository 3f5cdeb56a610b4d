import BodyCodec
import FlowExport
import Foundation
import ProxyModel
import XCTest

/// Shared helpers for the import tests: read a fixture, and look at a stored body the way an
/// exporter would (decoded per its Content-Encoding).
enum HARImportAssertions {
    static func flows(_ json: String, file: StaticString = #filePath, line: UInt = #line) throws -> [Flow] {
        do {
            return try HARReader.flows(from: Data(json.utf8))
        } catch {
            XCTFail("import failed: \(error)", file: file, line: line)
            throw error
        }
    }

    /// The body's content: the stored (raw) bytes decoded per the flow's Content-Encoding header.
    static func decodedText(_ body: CapturedBody, headers: [HeaderField]) -> String? {
        let result = BodyDecoder.decode([UInt8](body.bytes), contentEncoding: headers.first(named: "Content-Encoding"))
        guard result.note == nil else { return nil }
        return String(decoding: result.bytes, as: UTF8.self)
    }

    /// What a bad file is refused with.
    static func importError(_ json: String, file: StaticString = #filePath, line: UInt = #line) -> HARImportError? {
        do {
            let flows = try HARReader.flows(from: Data(json.utf8))
            XCTFail("imported \(flows.count) flows from a bad file", file: file, line: line)
            return nil
        } catch {
            return error
        }
    }
}
