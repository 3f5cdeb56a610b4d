import CSQLite
import Foundation
import GRDB
import ProxyModel

/// The capture insert, bound column by column through SQLite's C API.
///
/// The writer must keep up with tens of thousands of flows per second on the same cores as the
/// proxy. GRDB's argument types (existentials, `DatabaseValue`, `StatementArguments`) cost more
/// per row than SQLite's own insert did; binding straight into the prepared statement removes
/// that layer. It lives beside `TrafficRepository`, which prepares it inside its write
/// transaction: the SQL still belongs to the repository.
struct FlowInsertStatement {
    private let connection: OpaquePointer
    private let handle: OpaquePointer

    /// Prepares `sql`, a positional INSERT of `FlowRecord.insertColumns` in that order.
    init(connection: OpaquePointer, sql: String) throws {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(connection, sql, -1, &statement, nil)
        guard code == SQLITE_OK, let statement else {
            throw Self.error(code, connection, sql: sql)
        }
        self.connection = connection
        self.handle = statement
    }

    func finalize() {
        sqlite3_finalize(handle)
    }

    /// Inserts one flow and returns its new row id.
    func insert(_ flow: Flow) throws -> Int64 {
        var column: Int32 = 0
        func next() -> Int32 {
            column += 1
            return column
        }
        bind(text: flow.kind.rawValue, at: next())
        bind(text: flow.clientAddress, at: next())
        sqlite3_bind_int64(handle, next(), FlowRecord.milliseconds(flow.startedAt))
        if let finished = flow.finishedAt {
            sqlite3_bind_int64(handle, next(), FlowRecord.milliseconds(finished))
        } else {
            sqlite3_bind_null(handle, next())
        }
        for value in [flow.timings.dns, flow.timings.connect, flow.timings.tls, flow.timings.send,
                      flow.timings.wait, flow.timings.receive] {
            sqlite3_bind_double(handle, next(), value)
        }
        bind(text: flow.method, at: next())
        bind(text: flow.scheme, at: next())
        bind(text: flow.host, at: next())
        sqlite3_bind_int64(handle, next(), Int64(flow.port))
        bind(text: flow.path, at: next())
        bind(text: flow.httpVersion, at: next())
        if let status = flow.status {
            sqlite3_bind_int64(handle, next(), Int64(status))
        } else {
            sqlite3_bind_null(handle, next())
        }
        bind(text: flow.reason, at: next())
        bind(text: flow.error, at: next())
        sqlite3_bind_int64(handle, next(), flow.bytesUp)
        sqlite3_bind_int64(handle, next(), flow.bytesDown)
        sqlite3_bind_int64(handle, next(), flow.marked ? 1 : 0)
        sqlite3_bind_int64(handle, next(), flow.requestBody.size)
        sqlite3_bind_int64(handle, next(), flow.requestBody.truncated ? 1 : 0)
        sqlite3_bind_int64(handle, next(), flow.responseBody.size)
        sqlite3_bind_int64(handle, next(), flow.responseBody.truncated ? 1 : 0)
        bind(text: HeaderFieldsJSON.encode(flow.requestHeaders), at: next())
        bind(text: HeaderFieldsJSON.encode(flow.responseHeaders), at: next())
        bind(text: flow.note, at: next())
        if let tls = flow.tls {
            bind(text: tls.clientVersion, at: next())
            bind(text: tls.clientCipher, at: next())
            bind(text: tls.alpn, at: next())
            bind(text: tls.sni, at: next())
            bind(text: tls.upstreamVersion, at: next())
            bind(text: tls.upstreamCipher, at: next())
            bind(text: tls.upstreamSubject, at: next())
            bind(text: tls.upstreamIssuer, at: next())
            if let notAfter = tls.upstreamNotAfter {
                sqlite3_bind_int64(handle, next(), FlowRecord.milliseconds(notAfter))
            } else {
                sqlite3_bind_null(handle, next())
            }
        } else {
            // Plain HTTP and tunnels, the common case: every TLS column NULL, nothing to convert.
            for _ in 0..<Self.tlsColumnCount {
                sqlite3_bind_null(handle, next())
            }
        }
        bind(text: flow.serverAddress, at: next())
        bind(text: AppliedRulesJSON.encode(flow.appliedRules), at: next())
        bind(text: ForwardedMessageJSON.encode(flow.forwardedRequest), at: next())
        bind(text: ForwardedMessageJSON.encode(flow.originResponse), at: next())
        bind(text: flow.responseTrailers.isEmpty ? nil : HeaderFieldsJSON.encode(flow.responseTrailers), at: next())
        if let streamID = flow.streamID {
            sqlite3_bind_int64(handle, next(), Int64(streamID))
        } else {
            sqlite3_bind_null(handle, next())
        }
        sqlite3_bind_int64(handle, next(), Int64(flow.messageCount))
        if let replayOf = flow.replayOf {
            sqlite3_bind_int64(handle, next(), replayOf)
        } else {
            sqlite3_bind_null(handle, next())
        }
        sqlite3_bind_double(handle, next(), flow.timings.hold)
        let bodyIndexes = (next(), next(), next(), next())
        assert(Int(column) == FlowRecord.insertColumns.count, "binds must match FlowRecord.insertColumns")

        // Small bodies are bound without a copy (SQLITE_STATIC), so the statement runs while
        // their bytes are guaranteed to stay where they are; large ones (a captured body can be
        // 16 MiB) go in as zero blobs filled block by block afterwards. The origin side's are
        // empty (NULL) unless a rule changed a body.
        let request = flow.requestBody, response = flow.responseBody
        let forwarded = flow.forwardedRequest?.body ?? .empty, origin = flow.originResponse?.body ?? .empty
        let result = Self.boundBytes(request).withUnsafeBytes { requestBytes in
            Self.boundBytes(response).withUnsafeBytes { responseBytes in
                Self.boundBytes(forwarded).withUnsafeBytes { forwardedBytes in
                    Self.boundBytes(origin).withUnsafeBytes { originBytes in
                        bind(body: request, requestBytes, at: bodyIndexes.0)
                        bind(body: response, responseBytes, at: bodyIndexes.1)
                        bind(body: forwarded, forwardedBytes, at: bodyIndexes.2)
                        bind(body: origin, originBytes, at: bodyIndexes.3)
                        var code = sqlite3_step(handle)
                        sqlite3_reset(handle)
                        sqlite3_clear_bindings(handle)
                        let rowID = sqlite3_last_insert_rowid(connection)
                        if code == SQLITE_DONE { code = SQLITE_OK }
                        let largest = max(request.storedCount, response.storedCount, forwarded.storedCount, origin.storedCount)
                        guard code == SQLITE_OK, largest >= Self.largeBlobThreshold else { return (code, rowID) }
                        for (body, column) in [(request, "request_body"), (response, "response_body"),
                                               (forwarded, "forwarded_request_body"), (origin, "origin_response_body")]
                        where code == SQLITE_OK && body.storedCount >= Self.largeBlobThreshold {
                            code = writeLargeBlob(body, column: column, rowID: rowID)
                        }
                        return (code, rowID)
                    }
                }
            }
        }
        guard result.0 == SQLITE_DONE || result.0 == SQLITE_OK else {
            throw Self.error(result.0, connection, sql: nil)
        }
        return result.1
    }

    /// The `tls_*` columns, bound together from `Flow.tls`.
    private static let tlsColumnCount = 9

    /// Bodies from this size on are inserted as zero-filled blobs and written in chunks
    /// afterwards, so SQLite never builds a record as large as the body in memory.
    static let largeBlobThreshold = 256 << 10
    private static let blobChunk = 1 << 20

    /// Fills a zero blob inserted for a large body, block by block as it was captured, in
    /// writes of at most `blobChunk` bytes (incremental blob I/O).
    private func writeLargeBlob(_ body: CapturedBody, column: String, rowID: Int64) -> Int32 {
        var blob: OpaquePointer?
        var code = sqlite3_blob_open(connection, "main", "flows", column, rowID, 1, &blob)
        guard code == SQLITE_OK, let blob else { return code }
        defer { sqlite3_blob_close(blob) }
        var offset = 0
        for part in body.parts where code == SQLITE_OK {
            code = part.withUnsafeBytes { bytes -> Int32 in
                guard let base = bytes.baseAddress else { return SQLITE_OK }
                var written = 0, result = SQLITE_OK
                while written < bytes.count && result == SQLITE_OK {
                    let length = min(Self.blobChunk, bytes.count - written)
                    result = sqlite3_blob_write(blob, base + written, Int32(length), Int32(offset + written))
                    written += length
                }
                return result
            }
            offset += part.count
        }
        return code
    }

    /// The bytes bound in the insert itself: none for a large body (a zero blob stands in).
    private static func boundBytes(_ body: CapturedBody) -> Data {
        body.storedCount >= largeBlobThreshold ? Data() : body.bytes
    }

    private func bind(body: CapturedBody, _ bytes: UnsafeRawBufferPointer, at index: Int32) {
        if body.storedCount >= Self.largeBlobThreshold {
            sqlite3_bind_zeroblob(handle, index, Int32(body.storedCount))
        } else {
            bind(blob: bytes, at: index)
        }
    }

    private func bind(text: String?, at index: Int32) {
        guard var text else {
            sqlite3_bind_null(handle, index)
            return
        }
        text.withUTF8 { bytes in
            if let base = bytes.baseAddress, bytes.count > 0 {
                base.withMemoryRebound(to: CChar.self, capacity: bytes.count) {
                    _ = sqlite3_bind_text(handle, index, $0, Int32(bytes.count), Self.transient)
                }
            } else {
                // An empty buffer may have no address, which SQLite would store as NULL.
                sqlite3_bind_text(handle, index, "", 0, Self.transient)
            }
        }
    }

    /// Empty bodies are stored as NULL (as GRDB stored them before); small ones are bound
    /// without a copy.
    private func bind(blob bytes: UnsafeRawBufferPointer, at index: Int32) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else {
            sqlite3_bind_null(handle, index)
            return
        }
        sqlite3_bind_blob(handle, index, base, Int32(bytes.count), nil)
    }

    /// SQLITE_TRANSIENT (a C macro Swift cannot import): SQLite copies the bytes.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    private static func error(_ code: Int32, _ connection: OpaquePointer, sql: String?) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(connection)),
                      sql: sql)
    }
}
