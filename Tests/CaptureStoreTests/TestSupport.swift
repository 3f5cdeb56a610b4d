import Dispatch
import Foundation
import GRDB
import Logging
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore


/// A capture file as an older ProxyApp left it: the schema up to `migration`, and one flow
/// (`http://old.test/before`, status 200) written with that schema's columns.
func makeOldCapture(in directory: TemporaryDirectory, upTo migration: String) throws -> String {
    let path = directory.file("capture.sqlite")
    let queue = try DatabaseQueue(path: path)
    try TrafficMigrations.migrator.migrate(queue, upTo: migration)
    try queue.write { db in
        try db.execute(sql: """
            INSERT INTO flows (kind, client_address, started_at, method, scheme, host, port, path, http_version, status)
            VALUES ('http', '127.0.0.1:5000', 1763760000000, 'GET', 'http', 'old.test', 80, '/before', 'HTTP/1.1', 200)
            """)
    }
    try queue.close()
    return path
}


/// A value shared between threads, for collecting what callbacks saw.
final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) {
        self.value = value
    }

    func withValue<T>(_ body: (inout Value) -> T) -> T {
        lock.withLock { body(&value) }
    }
}
