import CaptureStore
import Foundation
import Logging
import ProxyModel
import TestSupport
import XCTest

extension TemporaryDirectory {
    /// A new read-write capture database `name` in this directory, holding `flows`.
    public func makeRepository(_ name: String = "capture.sqlite", flows: [Flow] = []) throws -> TrafficRepository {
        let repository = TrafficRepository(database: try TrafficDatabase(path: file(name)))
        if !flows.isEmpty {
            _ = try repository.insert(flows)
        }
        return repository
    }
}

extension XCTestCase {
    /// A new read-write capture database in a temporary directory removed when the test ends:
    /// the capture tests of several targets start from one.
    public func makeRepository(_ label: String = #function) throws -> TrafficRepository {
        try makeTemporaryDirectory(label).makeRepository()
    }
}

/// A swift-log handler that keeps what is logged, to count messages.
public final class CapturingLogHandler: LogHandler, @unchecked Sendable {
    public struct Entry: Sendable {
        public var level: Logger.Level
        public var message: String
        /// The entry's own metadata, each value as text.
        public var metadata: [String: String] = [:]
    }

    private let lock = NSLock()
    private var stored: [Entry] = []
    public var metadata: Logger.Metadata = [:]
    public var logLevel: Logger.Level = .trace
    /// Called with each entry on the logging thread, after it is stored (a test can hold that
    /// thread here).
    private let onEntry: @Sendable (Entry) -> Void

    public init(onEntry: @escaping @Sendable (Entry) -> Void = { _ in }) {
        self.onEntry = onEntry
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        let entry = Entry(level: event.level, message: event.message.description,
                          metadata: (event.metadata ?? [:]).mapValues { "\($0)" })
        lock.withLock { stored.append(entry) }
        onEntry(entry)
    }

    public var entries: [Entry] {
        lock.withLock { stored }
    }

    public var logger: Logger {
        Logger(label: "test.capture") { _ in self }
    }
}

/// Flows for the capture tests: plain ones by index, and two with every field set and awkward values.
public enum Samples {
    /// A plain flow whose fields identify it by `index`.
    public static func flow(_ index: Int, bodyBytes: Int = 0) -> Flow {
        Flow(
            kind: .http, clientAddress: "127.0.0.1:\(40000 + index % 20000)",
            startedAt: Date(timeIntervalSince1970: 1_763_760_000 + Double(index) / 1000),
            finishedAt: Date(timeIntervalSince1970: 1_763_760_001 + Double(index) / 1000),
            timings: FlowTimings(connect: 1, send: 0.5, wait: 2, receive: 0.25),
            method: "GET", scheme: "http", host: "origin.test", port: 8080, path: "/item/\(index)",
            requestHeaders: [HeaderField(name: "Host", value: "origin.test:8080")],
            status: 200, reason: "OK",
            responseHeaders: [HeaderField(name: "Content-Length", value: "\(bodyBytes)")],
            responseBody: CapturedBody(bytes: Data(repeating: UInt8(index & 0xFF), count: bodyBytes),
                                       size: Int64(bodyBytes)))
    }

    /// An HTTP flow with every field set, and awkward values everywhere.
    public static let fullHTTP = Flow(
        kind: .http, clientAddress: "[::1]:51234",
        startedAt: Date(timeIntervalSince1970: 1_763_760_000.123),
        finishedAt: Date(timeIntervalSince1970: 1_763_760_002.5),
        timings: FlowTimings(dns: -1, connect: 12.5, tls: -1, send: 0.125, wait: 80.75, receive: 3),
        method: "POST", scheme: "https", host: "bücher.example", port: 8443,
        path: "/search?q=caf%C3%A9&x=\"y\"", httpVersion: "HTTP/1.0",
        requestHeaders: [
            HeaderField(name: "Host", value: "bücher.example:8443"),
            HeaderField(name: "Cookie", value: "a=1"),
            HeaderField(name: "X-Quote", value: #"say "hi" \ back\slash"#),
            HeaderField(name: "Cookie", value: "b=2"),
            HeaderField(name: "X-Control", value: "nul\u{0}bell\u{7}tab\tnl\ncr\r\u{1F}del\u{7F}"),
            HeaderField(name: "X-Unicode", value: "naïve ☃ 日本語 🎉 \u{2028} é"),
            HeaderField(name: "X-Empty", value: ""),
        ],
        requestBody: CapturedBody(bytes: Data((0...255).map { UInt8($0) }), size: 10_000,
                                  truncated: true),
        status: 502, reason: "Bad Gateway",
        responseHeaders: [
            HeaderField(name: "Set-Cookie", value: "s=1; Path=/"),
            HeaderField(name: "Set-Cookie", value: "t=2; Path=/"),
            HeaderField(name: "content-type", value: "application/octet-stream"),
        ],
        responseBody: CapturedBody(bytes: Data([0x00, 0xFF, 0x1F, 0x8B, 0x00]), size: 5),
        error: "upstream closed the connection: \"ECONNRESET\" ☠",
        bytesUp: 0, bytesDown: 0, marked: false)

    /// A tunnel flow: no status, no response, no finish time, relayed byte counts, marked.
    public static let tunnel = Flow(
        kind: .tunnel, clientAddress: "10.0.0.7:60000",
        startedAt: Date(timeIntervalSince1970: 1_763_760_010.001), finishedAt: nil,
        timings: FlowTimings(dns: 0, connect: 4, tls: -1, send: -1, wait: -1, receive: -1),
        method: "CONNECT", scheme: "https", host: "2001:db8::1", port: 443, path: "",
        httpVersion: "HTTP/1.1", requestHeaders: [HeaderField(name: "Host", value: "[2001:db8::1]:443")],
        requestBody: .empty, status: nil, reason: nil, responseHeaders: [], responseBody: .empty,
        error: nil, bytesUp: 5_000_000_123, bytesDown: 7, marked: true)
}

extension XCTestCase {
    /// Flushes `writer` on another thread and fails the test, instead of hanging it, when the
    /// flush takes longer than `timeout` seconds.
    public func flush(_ writer: CaptureWriter, timeout: TimeInterval = 30,
               file: StaticString = #filePath, line: UInt = #line) {
        let flushed = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            writer.flush()
            flushed.signal()
        }
        if flushed.wait(timeout: .now() + timeout) == .timedOut {
            XCTFail("flush did not return within \(timeout) s", file: file, line: line)
        }
    }
}

extension CapturedBody {
    /// `bytes` captured as a live exchange does: appended in 16 KiB reads and spooled into
    /// `spool` once a block is full; finished (as at the response's end) unless `finish` is false.
    public static func spooled(_ bytes: Data, into spool: any BodySpool, finish: Bool = true) -> CapturedBody {
        var body = CapturedBody()
        body.size = Int64(bytes.count)
        var offset = 0
        while offset < bytes.count {
            let end = min(offset + 16_384, bytes.count)
            bytes[offset..<end].withUnsafeBytes { body.append($0) }
            offset = end
            if body.spool == nil, body.storedCount >= blockSize { body.startSpooling(spool) }
        }
        if finish { body.finishSpooling() }
        return body
    }
}
