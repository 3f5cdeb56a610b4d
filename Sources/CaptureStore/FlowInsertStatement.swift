import CSQLite
import FlowFilter
import Foundation
import GRDB
import ProxyModel

/// The capture insert, bound column by column through SQLite's C API.
///
/// The writer must keep up with tens of thousands of flows per second on the same cores as the
/// proxy. GRDB's argument types (existentials, `DatabaseValue`, `StatementArguments`) cost more
/// per row than SQLite's own insert did; binding straight into the prepared statement removes
/// that layer. It lives beside `TrafficRepository`, which prepares it inside its write
/// transaction: the SQL still belongs to the repository. Each flow's row in the full-text index
/// (`FullTextIndex`) is inserted with it.
struct FlowInsertStatement {
    private let connection: OpaquePointer
    private let handle: OpaquePointer
    /// Where large bodies go.
    private let bodyFiles: BodyFileStore
    /// The flow's row in the full-text index.
    private let fullText: FullTextInsertStatement
    /// The row's text, bound without a copy while the statement runs.
    private let texts = SQLiteTextArena()

    /// Prepares `sql`, a positional INSERT of `FlowRecord.insertColumns` in that order, on `db`
    /// (inside its write transaction).
    init(_ db: Database, sql: String, bodyFiles: BodyFileStore) throws {
        guard let connection = db.sqliteConnection else { throw DatabaseError(resultCode: .SQLITE_MISUSE) }
        let statement = try SQLiteBinding.prepare(sql, on: connection)
        do {
            self.fullText = try FullTextInsertStatement(db)
        } catch {
            sqlite3_finalize(statement)
            throw error
        }
        self.connection = connection
        self.handle = statement
        self.bodyFiles = bodyFiles
    }

    func finalize() {
        sqlite3_finalize(handle)
        fullText.finalize()
    }

    /// Inserts one flow and returns its new row id.
    func insert(_ flow: Flow) throws -> Int64 {
        // The index reads a spooled body's start from its spool, so before the spool is claimed.
        let document = FullTextDocument(flow)
        // Spooled bodies are named first: one whose file could not be written is stored empty
        // and truncated, and the columns below must say so. (The flow itself is not copied to
        // change them: a copy retains every field, on the writer's busiest path.)
        let (requestSpool, request) = claimed(flow.requestBody)
        let (responseSpool, response) = claimed(flow.responseBody)
        texts.reset()
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
        sqlite3_bind_int64(handle, next(), request.size)
        sqlite3_bind_int64(handle, next(), request.truncated ? 1 : 0)
        sqlite3_bind_int64(handle, next(), response.size)
        sqlite3_bind_int64(handle, next(), response.truncated ? 1 : 0)
        bind(headers: flow.requestHeaders, at: next())
        bind(headers: flow.responseHeaders, at: next())
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
        if flow.responseTrailers.isEmpty {
            sqlite3_bind_null(handle, next())
        } else {
            bind(headers: flow.responseTrailers, at: next())
        }
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

        // Bodies of `BodyFileStore.threshold` bytes and more go to files, named in the
        // `*_body_file` columns with the BLOB left NULL. Smaller ones are bound without a copy
        // (SQLITE_STATIC), as the text is, so the statement runs while their bytes stay where
        // they are. The origin side's bodies are empty (NULL) unless a rule changed a body.
        let forwarded = flow.forwardedRequest?.body ?? .empty, origin = flow.originResponse?.body ?? .empty
        let inFile = (bind(file: request, named: requestSpool, at: next()), bind(file: response, named: responseSpool, at: next()),
                      bind(file: forwarded, at: next()), bind(file: origin, at: next()))
        let bodyIndexes = (next(), next(), next(), next())
        assert(Int(column) == FlowRecord.insertColumns.count, "binds must match FlowRecord.insertColumns")
        let result = texts.run(binding: handle) {
            Self.inlineBytes(request, inFile.0).withUnsafeBytes { requestBytes in
                Self.inlineBytes(response, inFile.1).withUnsafeBytes { responseBytes in
                    Self.inlineBytes(forwarded, inFile.2).withUnsafeBytes { forwardedBytes in
                        Self.inlineBytes(origin, inFile.3).withUnsafeBytes { originBytes in
                            bind(blob: requestBytes, at: bodyIndexes.0)
                            bind(blob: responseBytes, at: bodyIndexes.1)
                            bind(blob: forwardedBytes, at: bodyIndexes.2)
                            bind(blob: originBytes, at: bodyIndexes.3)
                            let code = sqlite3_step(handle)
                            sqlite3_reset(handle)
                            sqlite3_clear_bindings(handle)
                            return (code, sqlite3_last_insert_rowid(connection))
                        }
                    }
                }
            }
        }
        guard result.0 == SQLITE_DONE || result.0 == SQLITE_OK else {
            throw SQLiteBinding.error(result.0, connection)
        }
        try fullText.insert(document, id: result.1)
        return result.1
    }

    /// The file name of a spooled body, now moved into the store (nil for a body in memory),
    /// and the body as stored: a spool that failed leaves it empty and truncated (its size still
    /// counted).
    private func claimed(_ body: CapturedBody) -> (file: String?, body: CapturedBody) {
        guard let spool = body.spool else { return (nil, body) }
        guard let file = spool as? BodyFileSpool, let name = file.claim() else {
            var lost = body
            lost.bytes = Data()
            lost.truncated = true
            return (nil, lost)
        }
        return (name, body)
    }

    /// Binds the file column of `body`: its file's name when it was spooled (`named`) or is large
    /// enough to be stored in one (written now, unless the same bytes are there already), else
    /// NULL. Returns whether it went to a file. A file that cannot be written leaves the body in
    /// its BLOB column.
    private func bind(file body: CapturedBody, named spooled: String? = nil, at index: Int32) -> Bool {
        if let spooled {
            bind(text: spooled, at: index)
            return true
        }
        guard BodyFileStore.storesExternally(body), let name = try? bodyFiles.write(body) else {
            sqlite3_bind_null(handle, index)
            return false
        }
        bind(text: name, at: index)
        return true
    }

    /// The bytes bound in the BLOB column: none for a body in a file.
    private static func inlineBytes(_ body: CapturedBody, _ inFile: Bool) -> Data {
        inFile ? Data() : body.bytes
    }

    /// The `tls_*` columns, bound together from `Flow.tls`.
    private static let tlsColumnCount = 9

    /// Text is bound when the statement runs (`texts.run`), without a copy.
    private func bind(text: String?, at index: Int32) {
        texts.add(text, at: index, of: handle)
    }

    /// Header lists are written as JSON (`HeaderFieldsJSON`) straight into the row's text.
    private func bind(headers: [HeaderField], at index: Int32) {
        texts.add(at: index, of: handle) { HeaderFieldsJSON.append(headers, to: &$0) }
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
}
