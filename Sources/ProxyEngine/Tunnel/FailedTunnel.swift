import Foundation
import ProxyModel

/// How a tunnel that failed is recorded, the same wherever it failed (the client's TLS handshake,
/// the upstream, a reset mid-relay): a failed exchange with its error and no status. The 200 of
/// the CONNECT answer is no outcome: kept, it would read `200` in `proxyapp flows` and HAR and
/// match `~c 200` while the terminal UI says `ERR`.
extension Flow {
    mutating func finishFailedTunnel(because why: String, at time: Date = Date()) {
        status = nil
        reason = nil
        error = why
        finishedAt = time
    }
}
