import CaptureStore
import FlowExport
import Foundation
import ProxyModel

/// Why a HAR export failed, in one line that names the file and what to do.
public struct HARFileExportError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// Streams the flows of a capture that match a query into a HAR file: the one export path that
/// `proxyapp export --har` and the TUI's `e` key share.
///
/// Flows are read with a cursor and rendered in batches (`ExportBatch`), so memory stays flat
/// whatever the capture's size; the file comes into place only when complete
/// (`ExportDestination`).
public struct HARFileExport: Sendable {
    public var query: FlowQuery
    public var redact: Bool
    /// Written into the HAR's `creator.version`.
    public var creatorVersion: String

    public init(query: FlowQuery, redact: Bool = false, creatorVersion: String) {
        self.query = query
        self.redact = redact
        self.creatorVersion = creatorVersion
    }

    /// Writes the matching flows of `repository` to `path` (`-` for stdout); returns how many.
    public func write(from repository: any FlowStore, to path: String) throws(HARFileExportError) -> Int {
        let destination = ExportDestination(path: path)
        let output: FileOutput
        if case .refused(_, let reason) = destination {
            throw HARFileExportError("cannot write \(path): \(reason).")
        }
        do {
            output = try destination.open()
        } catch {
            throw HARFileExportError("cannot write \(path): \(error). Check that its directory exists and is writable.")
        }
        do {
            let writer = try HARWriter(
                output: output, creator: HARCreator(name: "ProxyApp", version: creatorVersion),
                pageStarted: try repository.earliestStart(matching: query) ?? Date(),
                pageTitle: "ProxyApp capture", redaction: redact)
            var batch = ExportBatch()
            try repository.forEachFlow(matching: query, withMessages: true) { flow in
                if batch.add(flow) {
                    try writer.write(contentsOf: batch.take())
                }
            }
            try writer.write(contentsOf: batch.take())
            try writer.finish()
            try destination.commit(output)
            return writer.entryCount
        } catch {
            destination.abandon(output)
            if let error = error as? HARFileExportError { throw error }
            let reason = CaptureErrorText.describe(error)
            throw HARFileExportError("export to \(destination.name) failed: \(reason). \(destination.failureRemark)")
        }
    }
}

/// Flows collected for `HARWriter.write(contentsOf:)`, which renders a batch on every core:
/// up to 64 flows or 8 MiB of captured bodies, so the batch and its rendered JSON stay small.
struct ExportBatch {
    static let maximumFlows = 64
    static let maximumBodyBytes = 8 << 20

    private var flows: [Flow] = []
    private var bodyBytes = 0

    /// Adds `flow`; true when the batch is full and should be written.
    mutating func add(_ flow: Flow) -> Bool {
        flows.append(flow)
        bodyBytes += flow.capturedBodyBytes
        return flows.count >= Self.maximumFlows || bodyBytes >= Self.maximumBodyBytes
    }

    /// The flows collected so far, in order; the batch is empty afterwards.
    mutating func take() -> [Flow] {
        defer {
            flows.removeAll(keepingCapacity: true)
            bodyBytes = 0
        }
        return flows
    }
}
