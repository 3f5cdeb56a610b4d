import Foundation
import NIOConcurrencyHelpers
import ProxyModel

/// What the test origin saw, shared by its connection handlers and read by the tests.
///
/// It exists so tests can assert on the far side of the proxy: which requests arrived, with
/// which headers and bodies, and over how many TCP connections (upstream reuse).
final class OriginLog: Sendable {
    /// One request as the origin received it.
    struct Request: Sendable {
        var method: String
        var uri: String
        var version: String
        /// Headers in the order they arrived, duplicates kept.
        var headers: [HeaderField]
        var bodyLength: Int
        var bodyChecksum: Checksum
        /// The first `OriginHandler.keptBodyBytes` bytes of the body.
        var bodyPrefix: Data
        /// Which accepted connection (1-based) carried it.
        var connection: Int

        /// Every value of the header `name`, compared case-insensitively.
        func values(of name: String) -> [String] {
            headers.filter { $0.name.caseInsensitiveCompare(name) == .orderedSame }.map(\.value)
        }
    }

    private struct State {
        var requests: [Request] = []
        var acceptedConnections = 0
        var closedConnections = 0
        var streamedBodyBytes = 0
        /// HTTP/2 streams open now, per connection, and the most ever open on one connection.
        var openStreams: [Int: Int] = [:]
        var maxConcurrentStreams = 0
    }

    private let state = NIOLockedValueBox(State())

    /// Counts a new connection and returns its 1-based number.
    func connectionAccepted() -> Int {
        state.withLockedValue { state in
            state.acceptedConnections += 1
            return state.acceptedConnections
        }
    }

    func connectionClosed() {
        state.withLockedValue { $0.closedConnections += 1 }
    }

    /// Counts response body bytes handed to NIO by the streaming routes. The origin only
    /// writes while its channel is writable, so this follows what the proxy actually read.
    func streamed(_ count: Int) {
        state.withLockedValue { $0.streamedBodyBytes += count }
    }

    /// An HTTP/2 stream opened on `connection` (counted until `streamClosed`).
    func streamOpened(connection: Int) {
        state.withLockedValue { state in
            state.openStreams[connection, default: 0] += 1
            state.maxConcurrentStreams = max(state.maxConcurrentStreams, state.openStreams[connection]!)
        }
    }

    func streamClosed(connection: Int) {
        state.withLockedValue { $0.openStreams[connection, default: 0] -= 1 }
    }

    /// The most HTTP/2 streams ever open at once on one connection.
    var maxConcurrentStreams: Int {
        state.withLockedValue { $0.maxConcurrentStreams }
    }

    func append(_ request: Request) {
        state.withLockedValue { $0.requests.append(request) }
    }

    var requests: [Request] {
        state.withLockedValue { $0.requests }
    }

    var acceptedConnections: Int {
        state.withLockedValue { $0.acceptedConnections }
    }

    var closedConnections: Int {
        state.withLockedValue { $0.closedConnections }
    }

    var streamedBodyBytes: Int {
        state.withLockedValue { $0.streamedBodyBytes }
    }
}
