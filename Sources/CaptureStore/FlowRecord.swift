import Foundation
import GRDB
import ProxyModel

/// A `Flow` as a row of the `flows` table: the GRDB adapter between the model and the schema.
///
/// The model stays free of GRDB; this wrapper owns the column names and the conversions
/// (dates to epoch milliseconds, headers to JSON, bodies to BLOB + size + truncated flag).
struct FlowRecord {
    /// The flow as read; a body kept in a file is empty here until `BodyFileStore.flow(from:)`
    /// reads it.
    var flow: Flow
    /// The files (`BodyFileStore` names) of the bodies the row keeps outside the database.
    var bodyFiles = BodyFileNames()

    init(_ flow: Flow) {
        self.flow = flow
    }
}

/// Which of a row's four bodies live in files, by file name (nil: in the BLOB column).
struct BodyFileNames: Equatable {
    var request: String?
    var response: String?
    var forwardedRequest: String?
    var originResponse: String?

    var isEmpty: Bool { self == BodyFileNames() }
}

extension FlowRecord {
    /// The columns of `flows`, named as in `TrafficMigrations`.
    enum Columns {
        static let id = Column("id")
        static let kind = Column("kind")
        static let clientAddress = Column("client_address")
        static let startedAt = Column("started_at")
        static let finishedAt = Column("finished_at")
        static let dnsMs = Column("dns_ms")
        static let connectMs = Column("connect_ms")
        static let tlsMs = Column("tls_ms")
        static let sendMs = Column("send_ms")
        static let waitMs = Column("wait_ms")
        static let receiveMs = Column("receive_ms")
        static let method = Column("method")
        static let scheme = Column("scheme")
        static let host = Column("host")
        static let port = Column("port")
        static let path = Column("path")
        static let httpVersion = Column("http_version")
        static let status = Column("status")
        static let reason = Column("reason")
        static let error = Column("error")
        static let bytesUp = Column("bytes_up")
        static let bytesDown = Column("bytes_down")
        static let marked = Column("marked")
        static let requestBodySize = Column("request_body_size")
        static let requestBodyTruncated = Column("request_body_truncated")
        static let responseBodySize = Column("response_body_size")
        static let responseBodyTruncated = Column("response_body_truncated")
        static let requestHeaders = Column("request_headers")
        static let responseHeaders = Column("response_headers")
        static let requestBody = Column("request_body")
        static let responseBody = Column("response_body")
        // v2-https
        static let note = Column("note")
        static let tlsClientVersion = Column("tls_client_version")
        static let tlsClientCipher = Column("tls_client_cipher")
        static let tlsALPN = Column("tls_alpn")
        static let tlsSNI = Column("tls_sni")
        static let tlsUpstreamVersion = Column("tls_upstream_version")
        static let tlsUpstreamCipher = Column("tls_upstream_cipher")
        static let tlsUpstreamSubject = Column("tls_upstream_subject")
        static let tlsUpstreamIssuer = Column("tls_upstream_issuer")
        static let tlsUpstreamNotAfter = Column("tls_upstream_not_after")
        // v3-server-address
        static let serverAddress = Column("server_address")
        // v4-applied-rules
        static let appliedRules = Column("rules")
        // v7-forwarded-messages
        static let forwardedRequest = Column("forwarded_request")
        static let originResponse = Column("origin_response")
        static let forwardedRequestBody = Column("forwarded_request_body")
        static let originResponseBody = Column("origin_response_body")
        // v8-http2-details
        static let responseTrailers = Column("response_trailers")
        static let streamID = Column("stream_id")
        // v9-websocket-messages
        static let messageCount = Column("message_count")
        // v10-replay-of
        static let replayOf = Column("replay_of")
        static let holdMs = Column("hold_ms")
        // v12-body-files
        static let requestBodyFile = Column("request_body_file")
        static let responseBodyFile = Column("response_body_file")
        static let forwardedRequestBodyFile = Column("forwarded_request_body_file")
        static let originResponseBodyFile = Column("origin_response_body_file")
        static let bodyFiles = [requestBodyFile, responseBodyFile, forwardedRequestBodyFile, originResponseBodyFile]
    }

    /// Epoch milliseconds for a date, rounded to the nearest millisecond. Never traps: a date
    /// whose interval is not finite becomes 0 (the epoch) and one beyond Int64's range is clamped
    /// to `Int64.min`/`Int64.max` (importers and filters hand us whatever a file or user says).
    static func milliseconds(_ date: Date) -> Int64 {
        let value = (date.timeIntervalSince1970 * 1000).rounded()
        guard value.isFinite else { return 0 }
        // Double(Int64.max) rounds up to 2^63, which does not fit: compare with `<`.
        if value >= Double(Int64.max) { return .max }
        if value <= Double(Int64.min) { return .min }
        return Int64(value)
    }

    /// The date for stored epoch milliseconds.
    static func date(milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}

extension FlowRecord: FetchableRecord {
    init(row: Row) throws {
        let kindText: String = try row.decode(forColumn: Columns.kind)
        guard let kind = FlowKind(rawValue: kindText) else {
            throw CaptureStoreError.malformedRow("unknown flow kind \(kindText)")
        }
        let finishedAt: Int64? = try row.decode(forColumn: Columns.finishedAt)
        let error: String? = try row.decode(forColumn: Columns.error)
        // Captures made before failed tunnels were stored without a status kept the CONNECT's 200:
        // read as a failed exchange, as stored now (`FilterSQLCondition` says the same in SQL).
        let status: Int? = kind == .tunnel && error != nil ? nil : try row.decode(forColumn: Columns.status)
        let timings = FlowTimings(
            dns: try row.decode(forColumn: Columns.dnsMs),
            connect: try row.decode(forColumn: Columns.connectMs),
            tls: try row.decode(forColumn: Columns.tlsMs),
            send: try row.decode(forColumn: Columns.sendMs),
            wait: try row.decode(forColumn: Columns.waitMs),
            receive: try row.decode(forColumn: Columns.receiveMs),
            hold: try row.decode(forColumn: Columns.holdMs))
        let requestBody = CapturedBody(
            bytes: try row.decode(Data?.self, forColumn: Columns.requestBody) ?? Data(),
            size: try row.decode(forColumn: Columns.requestBodySize),
            truncated: try row.decode(forColumn: Columns.requestBodyTruncated))
        let responseBody = CapturedBody(
            bytes: try row.decode(Data?.self, forColumn: Columns.responseBody) ?? Data(),
            size: try row.decode(forColumn: Columns.responseBodySize),
            truncated: try row.decode(forColumn: Columns.responseBodyTruncated))
        flow = Flow(
            id: try row.decode(forColumn: Columns.id),
            kind: kind,
            clientAddress: try row.decode(forColumn: Columns.clientAddress),
            startedAt: Self.date(milliseconds: try row.decode(forColumn: Columns.startedAt)),
            finishedAt: finishedAt.map(Self.date(milliseconds:)),
            timings: timings,
            method: try row.decode(forColumn: Columns.method),
            scheme: try row.decode(forColumn: Columns.scheme),
            host: try row.decode(forColumn: Columns.host),
            port: try row.decode(forColumn: Columns.port),
            path: try row.decode(forColumn: Columns.path),
            httpVersion: try row.decode(forColumn: Columns.httpVersion),
            requestHeaders: try HeaderFieldsJSON.decode(
                try row.decode(forColumn: Columns.requestHeaders)),
            requestBody: requestBody,
            status: status,
            reason: try row.decode(forColumn: Columns.reason),
            responseHeaders: try HeaderFieldsJSON.decode(
                try row.decode(forColumn: Columns.responseHeaders)),
            responseBody: responseBody,
            error: error,
            bytesUp: try row.decode(forColumn: Columns.bytesUp),
            bytesDown: try row.decode(forColumn: Columns.bytesDown),
            marked: try row.decode(forColumn: Columns.marked),
            tls: try Self.tlsDetails(row),
            note: try row.decode(forColumn: Columns.note),
            serverAddress: try row.decode(forColumn: Columns.serverAddress),
            appliedRules: Self.appliedRules(row),
            forwardedRequest: ForwardedMessageJSON.request(
                Self.text(row, Columns.forwardedRequest), body: Self.blob(row, Columns.forwardedRequestBody)),
            originResponse: ForwardedMessageJSON.response(
                Self.text(row, Columns.originResponse), body: Self.blob(row, Columns.originResponseBody)),
            responseTrailers: Self.text(row, Columns.responseTrailers).flatMap { try? HeaderFieldsJSON.decode($0) } ?? [],
            streamID: Self.integer(row, Columns.streamID),
            messageCount: Self.integer(row, Columns.messageCount) ?? 0,
            replayOf: Self.integer(row, Columns.replayOf).map(Int64.init))
        bodyFiles = BodyFileNames(
            request: Self.text(row, Columns.requestBodyFile), response: Self.text(row, Columns.responseBodyFile),
            forwardedRequest: Self.text(row, Columns.forwardedRequestBodyFile),
            originResponse: Self.text(row, Columns.originResponseBodyFile))
    }

    private static func integer(_ row: Row, _ column: Column) -> Int? {
        guard row.hasColumn(column.name) else { return nil }
        let value: DatabaseValue = row[column.name]
        return Int.fromDatabaseValue(value)
    }

    /// A TEXT column's value; nil for NULL, for a column the query did not select, and for any
    /// other type (v7's columns must never make a flow unreadable).
    private static func text(_ row: Row, _ column: Column) -> String? {
        guard row.hasColumn(column.name) else { return nil }
        let value: DatabaseValue = row[column.name]
        return String.fromDatabaseValue(value)
    }

    private static func blob(_ row: Row, _ column: Column) -> Data? {
        guard row.hasColumn(column.name) else { return nil }
        let value: DatabaseValue = row[column.name]
        return Data.fromDatabaseValue(value)
    }

    /// The `rules` column's names; `[]` for NULL and for a value that is not a JSON array of
    /// strings (even one that is not text), so no stored value makes a flow unreadable.
    private static func appliedRules(_ row: Row) -> [String] {
        let value: DatabaseValue? = row[Columns.appliedRules]
        return AppliedRulesJSON.decode(value.flatMap(String.fromDatabaseValue))
    }

    /// The `tls_*` columns as `TLSDetails`; nil when all of them are NULL, which is how a flow
    /// without TLS is stored (so an empty `TLSDetails()` also reads back as nil).
    private static func tlsDetails(_ row: Row) throws -> TLSDetails? {
        let notAfter: Int64? = try row.decode(forColumn: Columns.tlsUpstreamNotAfter)
        let details = TLSDetails(
            clientVersion: try row.decode(forColumn: Columns.tlsClientVersion),
            clientCipher: try row.decode(forColumn: Columns.tlsClientCipher),
            alpn: try row.decode(forColumn: Columns.tlsALPN),
            sni: try row.decode(forColumn: Columns.tlsSNI),
            upstreamVersion: try row.decode(forColumn: Columns.tlsUpstreamVersion),
            upstreamCipher: try row.decode(forColumn: Columns.tlsUpstreamCipher),
            upstreamSubject: try row.decode(forColumn: Columns.tlsUpstreamSubject),
            upstreamIssuer: try row.decode(forColumn: Columns.tlsUpstreamIssuer),
            upstreamNotAfter: notAfter.map(date(milliseconds:)))
        return details.isEmpty ? nil : details
    }
}

extension FlowRecord: TableRecord {
    static let databaseTableName = "flows"

    /// The columns an insert sets, in the order `FlowInsertStatement` binds them.
    ///
    /// Inserts bind these positionally through SQLite's C API (`FlowInsertStatement`) instead of
    /// going through `PersistableRecord`, whose per-row dictionary of columns cost a third of
    /// the writer's time.
    static let insertColumns: [Column] = [
        Columns.kind, Columns.clientAddress, Columns.startedAt, Columns.finishedAt,
        Columns.dnsMs, Columns.connectMs, Columns.tlsMs, Columns.sendMs, Columns.waitMs,
        Columns.receiveMs, Columns.method, Columns.scheme, Columns.host, Columns.port,
        Columns.path, Columns.httpVersion, Columns.status, Columns.reason, Columns.error,
        Columns.bytesUp, Columns.bytesDown, Columns.marked, Columns.requestBodySize,
        Columns.requestBodyTruncated, Columns.responseBodySize, Columns.responseBodyTruncated,
        Columns.requestHeaders, Columns.responseHeaders, Columns.note, Columns.tlsClientVersion,
        Columns.tlsClientCipher, Columns.tlsALPN, Columns.tlsSNI, Columns.tlsUpstreamVersion,
        Columns.tlsUpstreamCipher, Columns.tlsUpstreamSubject, Columns.tlsUpstreamIssuer,
        Columns.tlsUpstreamNotAfter, Columns.serverAddress, Columns.appliedRules, Columns.forwardedRequest,
        Columns.originResponse, Columns.responseTrailers, Columns.streamID, Columns.messageCount,
        Columns.replayOf, Columns.holdMs, Columns.requestBodyFile, Columns.responseBodyFile,
        Columns.forwardedRequestBodyFile, Columns.originResponseBodyFile,
        Columns.requestBody, Columns.responseBody, Columns.forwardedRequestBody, Columns.originResponseBody,
    ]
}

/// The capture's timestamp convention (epoch milliseconds, rounded, never trapping), for the
/// shared PostgreSQL store as well.
package enum CaptureTime {
    package static func milliseconds(_ date: Date) -> Int64 { FlowRecord.milliseconds(date) }
    package static func date(milliseconds: Int64) -> Date { FlowRecord.date(milliseconds: milliseconds) }
}
