import Foundation
import ProxyModel

/// Reads a HAR 1.2 file (Chrome DevTools, Firefox, Charles, mitmproxy, our own export) into flows
/// ready for the capture store, as a stream: one entry is read, mapped and handed on before the
/// next is read, so memory stays at a few times the body limit whatever the file's size (a
/// 384 MB HAR made `JSONDecoder` hold 1.3 GB).
///
/// All or nothing is the caller's part: entries arrive as they are read, and a problem found
/// later in the file (a bad entry, a syntax error at the end) is thrown after earlier entries
/// were handed on, so a caller that stores them must remove them again on a failure
/// (`TrafficRepository.FlowImport`). Errors about the file are `HARImportError`s with the JSON
/// path of the offending field; a syntax error anywhere in the file is reported in preference
/// to a problem with the content, with its line and column.
public struct HARReader: Sendable {
    /// `proxyapp run`'s default body limit, which `import --max-body-size` shares.
    public static let defaultMaximumBodySize = 16 << 20

    /// Bodies keep their first `maximumBodySize` bytes (decoded, as HAR holds them); the rest is
    /// counted, not kept, and the body is marked truncated.
    public var maximumBodySize: Int

    public init(maximumBodySize: Int = defaultMaximumBodySize) {
        self.maximumBodySize = maximumBodySize
    }

    /// Reads the HAR from `source` and calls `body` with each entry's flow (`id` nil), in the
    /// file's order, as soon as it is read; returns how many.
    ///
    /// - Throws: `HARImportError` for a problem with the file, `HARReadError` when reading
    ///   fails, and whatever `body` throws (passed through unchanged).
    @discardableResult
    public func read(from source: any HARByteSource, _ body: (Flow) throws -> Void) throws -> Int {
        let input = try UnicodeInput.utf8(source)
        let tokens = JSONTokenizer(source: input)
        let reader = HAREntryReader(values: HARValueReader(tokens: tokens), bodyLimit: maximumBodySize)
        let limit = maximumBodySize
        var count = 0
        do {
            try reader.readDocument { entry, index in
                let flow = try HARFlowMapper.flow(from: entry, index: index, bodyLimit: limit)
                do { try body(flow) } catch { throw ConsumerFailure(error: error) }
                count += 1
            }
        } catch let failure as ConsumerFailure {
            throw failure.error
        } catch let error as JSONSyntaxError {
            throw Self.syntaxError(error)
        } catch let error as HARImportError {
            // As before the reader streamed: a syntax error anywhere wins over a content problem.
            if let syntaxError = try tokens.firstSyntaxErrorInRest() { throw Self.syntaxError(syntaxError) }
            throw error
        }
        return count
    }

    /// The flows of a HAR already in memory, in the file's order, each with `id` nil. Bodies are
    /// kept whole unless `maximumBodySize` says otherwise.
    public static func flows(from data: Data, maximumBodySize: Int = .max) throws(HARImportError) -> [Flow] {
        var flows: [Flow] = []
        do {
            try HARReader(maximumBodySize: maximumBodySize).read(from: MemorySource(data)) { flows.append($0) }
        } catch let error as HARImportError {
            throw error
        } catch {
            throw HARImportError(path: "$", reason: "\(error)")  // memory cannot fail to read
        }
        return flows
    }

    private static func syntaxError(_ error: JSONSyntaxError) -> HARImportError {
        HARImportError(path: "$", reason: "not valid JSON: \(error.message)")
    }

    /// Wraps what the caller's closure threw, so it passes the reader's own error handling untouched.
    private struct ConsumerFailure: Error {
        let error: any Error
    }
}
