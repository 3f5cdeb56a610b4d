import CaptureTestSupport
import FlowFilter
import Foundation
import Logging
import PostgresNIO
import ProxyModel
@testable import SharedCapture
import XCTest

@testable import CaptureStore

/// The capture writer into PostgreSQL and the reads back, on a real server.
final class PostgresCaptureTests: PostgresTestCase {
    /// A reader on a second session of the same database, as another process would read it.
    private func reader(_ session: PostgresSession) -> PostgresFlowReader {
        PostgresFlowReader(session: otherSession(session))
    }

    func testEveryFieldRoundTripsThroughTheStore() throws {
        let session = try makeSession()
        let writer = makeWriter(session)
        var withForwarded = Samples.flow(3, bodyBytes: 70_000)
        withForwarded.tls = TLSDetails(clientVersion: "TLSv1.3", alpn: "h2", sni: "origin.test",
                                       upstreamNotAfter: Date(timeIntervalSince1970: 1_900_000_000))
        withForwarded.appliedRules = ["block ads", "map-local"]
        withForwarded.responseTrailers = [HeaderField(name: "grpc-status", value: "0")]
        withForwarded.streamID = 7
        withForwarded.replayOf = 42
        withForwarded.note = "held 2 s"
        withForwarded.timings.hold = 2000
        let flows = [Samples.fullHTTP, Samples.tunnel, withForwarded]
        for flow in flows { writer.record(flow) }
        flush(writer)
        XCTAssertEqual(writer.statistics.flowsWritten, 3)

        let read = try reader(session).latestFlows(limit: 10)
        XCTAssertEqual(read.map(\.proxyName), ["lab-1", "lab-1", "lab-1"])
        for (stored, original) in zip(read.reversed(), flows) {
            var expected = original
            expected.id = stored.id
            expected.proxyName = "lab-1"
            XCTAssertEqual(stored, expected)
        }
        XCTAssertEqual(try reader(session).flow(id: try XCTUnwrap(read.first?.id))?.path, withForwarded.path)
        XCTAssertNil(try reader(session).flow(id: 999_999))
    }

    /// COPY's text format gives meaning to tabs, line ends, backslashes, `\N` (NULL) and a
    /// line of `\.` (the end of the data): a flow holding them all reads back as it was sent.
    func testCopySyntaxInTrafficIsOnlyText() throws {
        let session = try makeSession()
        let writer = makeWriter(session)
        var flow = Samples.flow(1)
        flow.path = "/a\tb\nc\rd\\e\\N"
        flow.reason = "\\."
        flow.note = "\\N"
        flow.error = "\n\\.\n"
        flow.method = "\\"
        flow.serverAddress = ""
        flow.requestBody = CapturedBody(bytes: Data("\t\n\\.\n\\N".utf8), size: 8)
        writer.record(flow)
        writer.record(Samples.flow(2))
        flush(writer)
        let stored = try reader(session).latestFlows(limit: 2)
        XCTAssertEqual(stored.count, 2)
        var expected = flow
        expected.id = stored.last?.id
        expected.proxyName = "lab-1"
        XCTAssertEqual(stored.last, expected)
        XCTAssertEqual(stored.first?.path, "/item/2", "the row after it is intact")
    }

    /// Bodies past the statement's byte bound split the batch's INSERT; every flow still
    /// arrives whole and in order.
    func testLargeBodiesSplitTheInsertAndArriveWhole() throws {
        let session = try makeSession()
        let writer = makeWriter(session, limits: .init(maxQueuedBodyBytes: 64 << 20, maxBatchDelay: .milliseconds(200)))
        let sizes = [5 << 20, 10, 5 << 20, 3 << 20, 0]
        for (index, size) in sizes.enumerated() { writer.record(Samples.flow(index, bodyBytes: size)) }
        flush(writer)
        let stored = try reader(session).latestFlows(limit: 10).reversed()
        XCTAssertEqual(stored.map(\.responseBody.storedCount), sizes)
        XCTAssertEqual(stored.map(\.path), (0..<sizes.count).map { "/item/\($0)" })
        XCTAssertEqual(stored.first?.responseBody.bytes, Samples.flow(0, bodyBytes: 5 << 20).responseBody.bytes)
        // A listing reads no body, unless its filter needs them.
        let listed = try reader(session).latestFlows(limit: 10, bodies: false).reversed()
        XCTAssertEqual(listed.map(\.responseBody.storedCount), [0, 0, 0, 0, 0])
        XCTAssertEqual(listed.map(\.responseBody.size), sizes.map(Int64.init))
        let byBody = try reader(session).latestFlows(limit: 10, matching: try FlowFilter(parsing: "~bs ."), bodies: false)
        XCTAssertEqual(byBody.map(\.responseBody.storedCount), [3 << 20, 5 << 20, 10, 5 << 20])
    }

    func testTextPostgreSQLCannotHoldIsKeptAsNearAsItCan() throws {
        let session = try makeSession()
        let writer = makeWriter(session)
        var flow = Samples.flow(1)
        flow.path = "/a\u{0}b"
        flow.error = "nul \u{0} inside"
        flow.requestHeaders = [HeaderField(name: "X-Nul", value: "a\u{0}b")]
        writer.record(flow)
        flush(writer)
        XCTAssertEqual(writer.statistics.flowsWritten, 1, "a NUL must not cost the flow")
        let stored = try XCTUnwrap(try reader(session).latestFlows(limit: 1).first)
        XCTAssertEqual(stored.path, "/a\u{FFFD}b")
        XCTAssertEqual(stored.error, "nul \u{FFFD} inside")
        XCTAssertEqual(stored.requestHeaders, flow.requestHeaders, "header JSON escapes NUL and keeps it")
    }

    func testFourProxiesWriteAtOnceEachFlowTaggedWithItsProxy() throws {
        let session = try makeSession()
        let names = ["lab-1", "lab-2", "ci-a", "ci-b"]
        let writers = names.map { name -> CaptureWriter in
            let own = PostgresSession(address: session.address)
            addTeardownBlock { own.disconnect() }
            return makeWriter(own, name: name, limits: .init(maxBatchSize: 64, maxBatchDelay: .milliseconds(5)))
        }
        DispatchQueue.concurrentPerform(iterations: writers.count) { index in
            for flow in 0..<300 { writers[index].record(Samples.flow(index * 1000 + flow)) }
        }
        for writer in writers { flush(writer) }
        let reads = reader(session)
        XCTAssertEqual(try reads.count(), 1200)
        for (index, name) in names.enumerated() {
            let own = try reads.latestFlows(limit: 1000, proxy: name)
            XCTAssertEqual(own.count, 300, name)
            XCTAssertEqual(Set(own.map { $0.path }), Set((0..<300).map { "/item/\(index * 1000 + $0)" }), name)
        }
        let all = try reads.latestFlows(limit: 2000)
        XCTAssertEqual(Set(all.compactMap(\.id)).count, 1200, "ids are unique across proxies")
    }

    /// A COPY blocks its caller until the server took the rows; it must not need a thread of
    /// Swift's cooperative pool for that, which may all be blocked (a command's shutdown waiting
    /// for the writer on a 2-core machine: `tui --store` replaying hung so).
    func testACopyNeverWaitsForSwiftsThreadPool() throws {
        let session = try makeSession()
        let writer = makeWriter(session)
        writer.record(Samples.flow(0))
        flush(writer)  // connected and migrated before the pool is taken
        let width = ProcessInfo.processInfo.activeProcessorCount
        let started = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        for _ in 0..<width {
            Task.detached {
                started.signal()
                release.wait()
            }
        }
        for _ in 0..<width { started.wait() }
        defer { for _ in 0..<width { release.signal() } }
        writer.record(Samples.flow(1))
        flush(writer, timeout: 10)
        XCTAssertEqual(writer.statistics.flowsWritten, 2)
    }

    func testMigrationsRunOnceWhenManyStartTogether() throws {
        let session = try makeSession()
        DispatchQueue.concurrentPerform(iterations: 4) { _ in
            let own = PostgresSession(address: session.address)
            defer { own.disconnect() }
            do {
                try PostgresFlowReader(session: own).prepare()
            } catch {
                XCTFail("\(error)")
            }
        }
        let versions = try session.query("SELECT version FROM proxyapp_schema ORDER BY version")
        XCTAssertEqual(try versions.map { try $0.decode(Int.self) }, [1, 2])
    }

    func testADatabaseFromANewerProxyappIsRefused() throws {
        let session = try makeSession()
        try PostgresFlowReader(session: session).prepare()
        try session.query("INSERT INTO proxyapp_schema (version) VALUES (99)")
        XCTAssertThrowsError(try PostgresFlowReader(session: session).prepare()) { error in
            XCTAssertEqual(error as? SharedCaptureError, .newerSchema(found: 99, known: PostgresSchema.migrations.count))
            XCTAssertTrue("\(error)".contains("update proxyapp"), "\(error)")
        }
    }

    func testWebSocketMessagesAndEndReachTheStore() throws {
        let session = try makeSession()
        let writer = makeWriter(session)
        var upgrade = Samples.flow(5)
        upgrade.status = 101
        let key = try XCTUnwrap(writer.recordOpen(upgrade))
        let time = Date(timeIntervalSince1970: 1_763_760_100)
        writer.append([CapturedMessage(direction: .sent, time: time, kind: .text, payload: Data("hello".utf8)),
                       CapturedMessage(direction: .received, time: time, kind: .close, payload: Data(), closeCode: 1000,
                                       closeReason: "bye")], to: key)
        writer.finish(key, with: OpenFlowEnd(finishedAt: time.addingTimeInterval(1), bytesUp: 11, bytesDown: 22,
                                            note: "closed by client"))
        flush(writer)
        let stored = try XCTUnwrap(try reader(session).latestFlows(limit: 1).first)
        XCTAssertEqual(stored.messageCount, 2)
        XCTAssertEqual(stored.bytesUp, 11)
        XCTAssertEqual(stored.bytesDown, 22)
        XCTAssertEqual(stored.note, "closed by client")
        let payloads = try session.query("SELECT kind, close_reason FROM proxyapp_messages ORDER BY id")
        XCTAssertEqual(try payloads.map { try $0.decode((String, String?).self).0 }, ["text", "close"])
    }

    func testFilterAndProxyNarrowTheReads() throws {
        let session = try makeSession()
        let first = makeWriter(session, name: "lab-1")
        let second = makeWriter(PostgresSession(address: session.address), name: "lab-2")
        for index in 0..<30 {
            var flow = Samples.flow(index)
            flow.host = index % 3 == 0 ? "api.shop.test" : "cdn.test"
            flow.status = index % 2 == 0 ? 200 : 404
            (index < 15 ? first : second).record(flow)
            if index == 14 { flush(first) }  // ids then follow the indexes
        }
        flush(second)
        let reads = reader(session)
        let filter = try FlowFilter(parsing: "~d shop & ~c 200")
        let matching = try reads.latestFlows(limit: 100, matching: filter)
        XCTAssertEqual(matching.map(\.path), [24, 18, 12, 6, 0].map { "/item/\($0)" }, "newest first")
        XCTAssertEqual(try reads.count(matching: filter), 5)
        XCTAssertEqual(try reads.count(matching: filter, proxy: "lab-2"), 2)
        XCTAssertEqual(try reads.count(matching: try FlowFilter(parsing: "~d shop & ~c 200 & ~proxy 'lab-2$'")), 2)
        XCTAssertEqual(try reads.count(matching: try FlowFilter(parsing: "~proxy lab")), 30)
        XCTAssertEqual(try reads.count(matching: try FlowFilter(parsing: "!~proxy 1")), 15)
        // Samples start a millisecond apart: since the 20th, ten are left.
        let since = Date(timeIntervalSince1970: 1_763_760_000.020)
        XCTAssertEqual(try reads.count(since: since), 10)
        XCTAssertEqual(try reads.count(matching: filter, since: since), 1, "24 alone")
        XCTAssertEqual(try reads.latestFlows(limit: 100, since: since).last?.path, "/item/20")
        XCTAssertEqual(try reads.latestFlows(limit: 2, matching: filter).count, 2)
        var small = reads
        small.pageSize = 4
        XCTAssertEqual(try small.latestFlows(limit: 100, matching: filter).count, 5, "across pages")
    }

    func testRetentionByAgeAndCountOverTheSharedCapture() throws {
        let session = try makeSession()
        let writer = makeWriter(session)
        let now = Date()
        for index in 0..<40 {
            var flow = Samples.flow(index)
            flow.startedAt = now.addingTimeInterval(index < 10 ? -90_000 : -60)  // 10 older than a day
            flow.marked = index == 0
            writer.record(flow)
        }
        flush(writer)
        let backend = PostgresCaptureBackend(session: PostgresSession(address: session.address), proxyName: "x")
        let byAge = try backend.enforce(RetentionPolicy(maxAge: 86_400), batchSize: 100, maxBatches: 1, protected: [])
        XCTAssertEqual(byAge.flowsRemoved, 9, "the marked old flow stays")
        let byCount = try backend.enforce(RetentionPolicy(maxFlows: 20), batchSize: 100, maxBatches: 1, protected: [])
        XCTAssertEqual(byCount.flowsRemoved, 10)
        let left = try reader(session).latestFlows(limit: 100)
        XCTAssertEqual(left.count, 21)
        XCTAssertEqual(left.last?.path, "/item/0", "the marked flow is kept")
        XCTAssertEqual(left.first?.path, "/item/39")
    }

    func testAStoreThatCannotBeReachedIsNamedInWords() throws {
        let cluster = try requireCluster()
        let nowhere = PostgresSession(address: PostgresStoreAddress(host: "127.0.0.1", port: 1, user: "qa",
                                                                  database: "x", tls: .disable))
        XCTAssertThrowsError(try nowhere.connect()) { error in
            XCTAssertEqual("\(error)", "cannot reach the PostgreSQL store postgres://qa@127.0.0.1:1/x?sslmode=disable: "
                           + "connection refused")
        }
        // A socket that accepts and never speaks (a wrong port, a black-holing firewall).
        let silent = try SilentListener()
        defer { silent.close() }
        let mute = PostgresSession(address: PostgresStoreAddress(host: "127.0.0.1", port: silent.port, user: "qa",
                                                               database: "x", tls: .disable),
                                   connectTimeout: .milliseconds(500))
        XCTAssertThrowsError(try mute.connect()) { error in
            XCTAssertEqual("\(error)", "cannot reach the PostgreSQL store postgres://qa@127.0.0.1:\(silent.port)/x?"
                           + "sslmode=disable: no answer within 0.5 seconds")
        }
        let wrongDatabase = PostgresSession(address: cluster.address(database: "no_such_db"))
        XCTAssertThrowsError(try wrongDatabase.connect()) { error in
            XCTAssertEqual("\(error)", #"the PostgreSQL store refused: database "no_such_db" does not exist (SQLSTATE 3D000)"#)
        }
    }

    /// The server goes away while flows keep coming: they wait in the writer's queue, and all
    /// of them are stored once it is back; the log says so once each way.
    func testAnOutageLosesNothingWithinTheQueuesBounds() throws {
        let cluster = try requireCluster()
        CaptureWriterState.firstRetryDelay = 0.05
        defer { CaptureWriterState.firstRetryDelay = 0.5 }
        let session = try makeSession()
        let log = CapturingLogHandler()
        let writer = makeWriter(session, log: log)
        writer.record(Samples.flow(0))
        flush(writer)
        try cluster.stopServer()
        for index in 1...200 { writer.record(Samples.flow(index)) }
        Thread.sleep(forTimeInterval: 0.5)  // several failed tries
        try cluster.startServer()
        flush(writer, timeout: 60)
        XCTAssertEqual(try reader(session).count(), 201)
        XCTAssertEqual(writer.statistics.flowsFailed, 0)
        let messages = log.entries.map(\.message)
        XCTAssertEqual(messages.filter { $0.hasPrefix("capture store unreachable") }.count, 1, "\(messages)")
        XCTAssertEqual(messages.filter { $0.hasPrefix("capture store reachable again") }.count, 1, "\(messages)")
    }

    /// A server that stops answering mid-session (every process frozen: a network gone quiet)
    /// is an outage, not a stall: the statement gives up after its time, the flows wait, and
    /// all of them are stored once it answers again.
    func testAServerThatStopsAnsweringIsAnOutageNotAStall() throws {
        let cluster = try requireCluster()
        CaptureWriterState.firstRetryDelay = 0.05
        defer { CaptureWriterState.firstRetryDelay = 0.5 }
        let session = PostgresSession(address: cluster.address(database: try cluster.createDatabase()),
                                      connectTimeout: .seconds(1), queryTimeout: .seconds(1))
        let log = CapturingLogHandler()
        let writer = makeWriter(session, log: log)
        writer.record(Samples.flow(0))
        flush(writer)
        try cluster.pause()
        var paused = true
        defer { if paused { try? cluster.resume() } }
        for index in 1...20 { writer.record(Samples.flow(index)) }
        for _ in 0..<100 where !log.entries.contains(where: { $0.message.hasPrefix("capture store unreachable") }) {
            Thread.sleep(forTimeInterval: 0.1)
        }
        XCTAssertEqual(writer.statistics.flowsWritten, 1)
        try cluster.resume()
        paused = false
        flush(writer, timeout: 60)
        XCTAssertEqual(writer.statistics.flowsWritten, 21)
        XCTAssertEqual(try reader(session).count(), 21)
        let unreachable = log.entries.filter { $0.message.hasPrefix("capture store unreachable") }
        XCTAssertEqual(unreachable.count, 1, "\(log.entries.map(\.message))")
    }

    /// Beyond the queue's bound flows are dropped and counted, and closing while the server is
    /// still down returns at once, saying how many flows were not stored.
    func testAnOutageBeyondTheBoundDropsCountsAndNeverHangsShutdown() throws {
        let cluster = try requireCluster()
        CaptureWriterState.firstRetryDelay = 0.05
        defer {
            CaptureWriterState.firstRetryDelay = 0.5
            try? cluster.startServer()
        }
        let session = try makeSession()
        try PostgresFlowReader(session: session).prepare()
        let log = CapturingLogHandler()
        let writer = makeWriter(session, log: log, limits: .init(maxQueuedFlows: 50, maxBatchSize: 10,
                                                                maxBatchDelay: .milliseconds(5)))
        try cluster.stopServer()
        for index in 0..<200 { writer.record(Samples.flow(index)) }
        let started = Date()
        writer.close()
        XCTAssertLessThan(Date().timeIntervalSince(started), 20, "close must not wait for the server")
        let statistics = writer.statistics
        XCTAssertEqual(statistics.flowsWritten, 0)
        XCTAssertGreaterThanOrEqual(statistics.flowsDropped, 140, "past the 50 queued (and one batch in hand)")
        XCTAssertTrue(log.entries.contains { $0.message.hasPrefix("capture store unreachable at shutdown") },
                      "\(log.entries.map(\.message))")
    }
}

/// A loopback socket that accepts connections (the kernel does, into its backlog) and never
/// says a word.
private struct SilentListener {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && listen(fd, 8) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard fd >= 0, listening else { throw CocoaError(.fileReadUnknown) }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() {
        _ = Glibc.close(fd)
    }
}
