import NIOConcurrencyHelpers
import NIOCore
@testable import ProxyEngine

/// A backend that records the names asked for and answers when the test says.
final class ManualLookupBackend: NameLookupBackend, @unchecked Sendable {
    private let lock = NIOLock()
    private var asked: [String] = []
    private var waiting: [String: [@Sendable (Result<[SocketAddress], NameLookupError>) -> Void]] = [:]
    private var stopped = false

    func lookUp(_ name: String, answer: @escaping @Sendable (Result<[SocketAddress], NameLookupError>) -> Void) {
        lock.withLock {
            asked.append(name)
            waiting[name, default: []].append(answer)
        }
    }

    func shutdown() {
        lock.withLock { stopped = true }
    }

    func answer(_ name: String, _ result: Result<[SocketAddress], NameLookupError>) {
        let answers = lock.withLock { waiting.removeValue(forKey: name) ?? [] }
        for answer in answers { answer(result) }
    }

    func asks(_ name: String) -> Int { lock.withLock { asked.filter { $0 == name }.count } }
    var isStopped: Bool { lock.withLock { stopped } }
}
