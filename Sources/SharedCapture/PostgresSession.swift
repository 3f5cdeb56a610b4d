import Foundation
import Logging
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// One connection to the shared store, used by one thread at a time (the capture writer's, or
/// a CLI command's), blocking that thread: the capture writer and the CLI are synchronous, and
/// neither runs on an event loop.
///
/// It owns a one-thread event loop group for its connection, connects on first use, and
/// connects again on the next call after the connection was lost. Every error leaves here as a
/// `SharedCaptureError` in words (`PostgresErrorText`).
public final class PostgresSession: @unchecked Sendable {
    public let address: PostgresStoreAddress
    private let group: MultiThreadedEventLoopGroup
    private let logger: Logger
    private let connectTimeout: TimeAmount
    /// How long one statement may go unanswered before the connection is dropped and the store
    /// counts as unreachable: a server that stops answering (a network gone quiet) must not
    /// hold the capture writer for ever.
    private let queryTimeout: TimeAmount
    /// The open connection; nil before the first call and after one was lost. Used by one
    /// thread at a time (see above), hence `@unchecked Sendable`.
    private var connection: PostgresConnection?
    private var nextConnectionID = 0

    /// - Parameter logger: postgres-nio's own log lines; they are at trace and debug level.
    public init(address: PostgresStoreAddress, connectTimeout: TimeAmount = .seconds(5),
                queryTimeout: TimeAmount = .seconds(30), logger: Logger = Logger(label: "proxyapp.postgres")) {
        self.address = address
        self.connectTimeout = connectTimeout
        self.queryTimeout = queryTimeout
        self.logger = logger
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    }

    deinit {
        if let connection { try? connection.close().wait() }
        try? group.syncShutdownGracefully()
    }

    /// Opens the connection now if there is none (to report an unreachable store at start).
    public func connect() throws {
        _ = try openConnection()
    }

    /// Closes the connection; the next call opens a new one.
    public func disconnect() {
        if let connection { try? connection.close().wait() }
        connection = nil
    }

    /// Runs one statement and returns its rows.
    @discardableResult
    public func query(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws -> [PostgresRow] {
        let connection = try openConnection()
        let silence = silenceWatch(on: connection)
        defer { silence.timer.cancel() }
        do {
            let result = try connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).wait()
            return Array(result.rows)
        } catch {
            throw failure(error, connection, timedOut: silence.fired.value)
        }
    }

    /// Closes `connection` once `queryTimeout` passes, unless cancelled first; `fired` says
    /// whether it did.
    private func silenceWatch(on connection: PostgresConnection) -> (timer: Scheduled<Void>, fired: TimeoutFlag) {
        let fired = TimeoutFlag()
        let timer = connection.eventLoop.scheduleTask(in: queryTimeout) {
            fired.value = true
            let closed: EventLoopFuture<Void> = connection.close()
            _ = closed
        }
        return (timer, fired)
    }

    /// The error to throw for a failed statement; forgets a closed connection.
    private func failure(_ error: any Error, _ connection: PostgresConnection, timedOut: Bool) -> SharedCaptureError {
        if connection.isClosed || timedOut { self.connection = nil }
        guard !timedOut else {
            let seconds = queryTimeout.nanoseconds / 1_000_000_000
            return .unreachable(address: address.redacted, reason: "no answer within \(seconds) seconds")
        }
        return PostgresErrorText.translate(error, address: address)
    }

    /// Set on the event loop when a statement's time ran out; read after its future completed.
    private final class TimeoutFlag: @unchecked Sendable {
        private let lock = NSLock()
        private var fired = false
        var value: Bool {
            get { lock.withLock { fired } }
            set { lock.withLock { fired = newValue } }
        }
    }

    /// Runs `body` between BEGIN and COMMIT; a thrown error rolls back (when the connection is
    /// still there to say so) and is rethrown.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try query("BEGIN")
        do {
            let result = try body()
            try query("COMMIT")
            return result
        } catch {
            if connection != nil { _ = try? query("ROLLBACK") }
            throw error
        }
    }

    /// `COPY table (columns) FROM STDIN` of `data` (text format, one buffer), blocking until
    /// the server has taken it all.
    public func copy(into table: String, columns: [String], data: ByteBuffer) throws {
        let connection = try openConnection()
        let silence = silenceWatch(on: connection)
        defer { silence.timer.cancel() }
        let outcome = CopyOutcome()
        let logger = logger
        // Not on Swift's cooperative pool: the caller blocks a thread until this finishes, and
        // that thread may be one of the pool's few (a command's shutdown on a 2-core machine),
        // which would leave none to run the copy.
        Task(executorPreference: copyExecutor) {
            do {
                try await connection.copyFrom(table: table, columns: columns, logger: logger) { writer in
                    try await writer.write(data)
                }
            } catch {
                outcome.error = error
            }
            outcome.done.signal()
        }
        outcome.done.wait()
        if let error = outcome.error {
            throw failure(error, connection, timedOut: silence.fired.value)
        }
    }

    /// Runs the tasks of this session's COPYs on a queue of their own (see `copy`).
    private let copyExecutor = QueueTaskExecutor(label: "proxyapp.postgres.copy")

    /// A task executor on a serial dispatch queue: tasks preferring it never wait for a thread of
    /// the cooperative pool.
    private final class QueueTaskExecutor: TaskExecutor, @unchecked Sendable {
        private let queue: DispatchQueue

        init(label: String) {
            queue = DispatchQueue(label: label)
        }

        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            queue.async { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
        }
    }

    /// What the task running a COPY hands back; `done` orders the write before the read.
    private final class CopyOutcome: @unchecked Sendable {
        let done = DispatchSemaphore(value: 0)
        var error: (any Error)?
    }

    private func openConnection() throws -> PostgresConnection {
        if let connection, !connection.isClosed { return connection }
        connection = nil
        var configuration = PostgresConnection.Configuration(
            host: address.host, port: address.port, username: address.user, password: address.password,
            database: address.database, tls: try tls())
        configuration.options.connectTimeout = connectTimeout
        nextConnectionID += 1
        do {
            let opened = try PostgresConnection.connect(on: group.next(), configuration: configuration,
                                                        id: nextConnectionID, logger: logger).wait()
            connection = opened
            return opened
        } catch {
            throw PostgresErrorText.translate(error, address: address)
        }
    }

    /// The TLS mode of `address`, with libpq's meanings (see `PostgresStoreAddress.TLSMode`).
    private func tls() throws -> PostgresConnection.Configuration.TLS {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch address.tls {
        case .disable:
            return .disable
        case .prefer, .require:
            configuration.certificateVerification = .none
        case .verifyFull:
            configuration.certificateVerification = .fullVerification
        }
        let context: NIOSSLContext
        do {
            context = try NIOSSLContext(configuration: configuration)
        } catch {
            throw SharedCaptureError.unreachable(address: address.redacted,
                                                 reason: "TLS could not be set up on this machine (its trust store)")
        }
        return address.tls == .prefer ? .prefer(context) : .require(context)
    }
}
