/// A request the proxy answers itself (block, map-local): the request is read to its end and
/// recorded like any other, and the answer goes out once the request has ended and the answer
/// is ready (a map-local file opened).
extension ExchangeStateMachine {
    /// The local answer is ready to be written (its file opened, or why not known).
    public mutating func localAnswerPrepared() -> [ExchangeAction] {
        guard phase == .answeringLocally else {
            return phase == .finished ? [.discardLocalAnswer] : []
        }
        localPrepared = true
        return respondLocallyIfReady()
    }

    /// The whole local answer was written.
    public mutating func localAnswerFinished() -> [ExchangeAction] {
        guard phase == .answeringLocally, localResponding else { return [] }
        phase = .finished
        return [.record(error: nil), .completeResponse(close: !localKeepAlive, requestEnded: true)]
    }

    /// Writing the local answer failed part way (`reason` says why): the head is out, so
    /// closing is the only honest signal.
    public mutating func localAnswerFailed(reason: String) -> [ExchangeAction] {
        guard phase == .answeringLocally, localResponding else { return [] }
        var actions = finishing()
        actions += [.record(error: "\(reason) (response incomplete)"), .abortClient(reason: reason)]
        return actions
    }

    /// The client took nothing of a local answer being written for the idle timeout: it
    /// stopped reading, and the answer cannot be finished.
    public mutating func writeStalled(seconds: Int64) -> [ExchangeAction] {
        guard isWritingLocalAnswer else { return [] }
        let reason = "the client stopped reading the map_local file for \(seconds)s"
        var actions = finishing()
        actions += [.record(error: "\(reason) (response incomplete)"), .abortClient(reason: reason)]
        return actions
    }

    /// NIO's request decoder stops after a request that asks to upgrade (WebSocket, h2c):
    /// nothing more can be read on the connection, so a local answer to one closes it.
    var localKeepAlive: Bool { request.keepAlive && !request.asksUpgrade }

    mutating func respondLocallyIfReady() -> [ExchangeAction] {
        guard phase == .answeringLocally, requestEnded, localPrepared, !localResponding else { return [] }
        localResponding = true
        return [.startLocalAnswer(close: !localKeepAlive || inputClosed)]
    }
}
