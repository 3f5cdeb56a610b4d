import CaptureStore
import CaptureTestSupport
import PostgresTestSupport
import SharedCapture
import XCTest

/// A test case with one throwaway PostgreSQL cluster for its class (started in `setUp()` of
/// the class, stopped in its `tearDown()`) and a fresh database for each test (`makeSession`).
class PostgresTestCase: XCTestCase {
    nonisolated(unsafe) static var cluster: PostgresTestCluster?
    /// Why the cluster did not start; every test of the class fails with it.
    nonisolated(unsafe) static var startFailure = "not started"

    override class func setUp() {
        super.setUp()
        do {
            cluster = try PostgresTestCluster.start()
        } catch {
            startFailure = "\(error)"
        }
    }

    override class func tearDown() {
        cluster?.stop()
        cluster = nil
        super.tearDown()
    }

    struct NoCluster: Error, CustomStringConvertible {
        let description: String
    }

    /// The class's cluster; throws (failing the test) when it could not be started.
    func requireCluster() throws -> PostgresTestCluster {
        guard let cluster = Self.cluster else { throw NoCluster(description: "no PostgreSQL: \(Self.startFailure)") }
        return cluster
    }

    /// A session on a new, empty database of the class's cluster.
    func makeSession() throws -> PostgresSession {
        let cluster = try requireCluster()
        let session = PostgresSession(address: cluster.address(database: try cluster.createDatabase()))
        addTeardownBlock { session.disconnect() }
        return session
    }

    /// A second session on `session`'s database, as another process would open; closed at
    /// teardown.
    func otherSession(_ session: PostgresSession) -> PostgresSession {
        let other = PostgresSession(address: session.address)
        addTeardownBlock { other.disconnect() }
        return other
    }

    /// A capture writer into `session`'s database, its flows named `name`; closed at teardown.
    func makeWriter(_ session: PostgresSession, name: String = "lab-1",
                    log: CapturingLogHandler = CapturingLogHandler(),
                    limits: CaptureWriter.Limits = .init(maxBatchDelay: .milliseconds(10))) -> CaptureWriter {
        let writer = CaptureWriter(backend: PostgresCaptureBackend(session: session, proxyName: name), limits: limits,
                                   logger: log.logger)
        addTeardownBlock { writer.close() }
        return writer
    }
}
