import NIOCore

/// One simulated client: one connection and one request in flight at a time, the next request
/// as soon as a response ended. It keeps its connection alive unless the plan wants a new one
/// per request (or the server said `Connection: close`), and it reconnects after a failure.
/// No request starts once the schedule ended; the one in flight then still completes.
///
/// Lives on one event loop and is touched only there.
final class LoadWorker: LoadClientBase, LoadClient, LoadConnectionOwner {
    private var connection: LoadConnectionHandler?
    /// When the request in flight started: at its write, or at the connect for the first
    /// request of a connection (so a new-connection request includes TCP, CONNECT and TLS).
    private var requestStartedAt = NIODeadline.distantPast
    /// When the current step (opening a connection, or one request) times out.
    private var stepDeadline = NIODeadline.distantFuture
    private(set) var finished = false

    func start() {
        openConnection()
    }

    /// Times out the current step if its deadline passed (called by the loop's watchdog).
    func checkTimeout(now: NIODeadline) {
        if now > stepDeadline, let connection {
            connection.timeOut()
        }
    }

    /// Closes the connection and does nothing more (the run was aborted).
    func stop() {
        finished = true
        stepDeadline = .distantFuture
        connection?.close()
        connection = nil
    }

    // MARK: - called by the connection

    func connectionReady(_ handler: LoadConnectionHandler) {
        guard handler === connection else { return handler.close() }
        stepDeadline = NIODeadline.now() + plan.timeout
        handler.sendRequest()
    }

    func responseEnded(_ handler: LoadConnectionHandler, status: Int, connectionClose: Bool) {
        guard handler === connection else { return handler.close() }
        let now = NIODeadline.now()
        let elapsed = now - requestStartedAt
        tally.recordResponse(status: status, nanoseconds: UInt64(max(0, elapsed.nanoseconds)),
                             measured: schedule.isMeasured(now))
        if plan.newConnectionPerRequest || connectionClose || now >= schedule.end {
            handler.close()
            connection = nil
            stepDeadline = .distantFuture
            openConnection()
        } else {
            requestStartedAt = now
            stepDeadline = now + plan.timeout
            handler.sendRequest()
        }
    }

    func connectionFailed(_ handler: LoadConnectionHandler, error: LoadError) {
        guard handler === connection, !finished else { return }
        connection = nil
        stepDeadline = .distantFuture
        tally.recordError(error.description)
        if owner.shouldGiveUp() {
            return owner.giveUp()
        }
        guard NIODeadline.now() < schedule.end else { return finish() }
        // Do not spin on a refusing server.
        loop.assumeIsolated().scheduleTask(in: .milliseconds(10)) { self.openConnection() }
    }

    // MARK: - private

    private func openConnection() {
        guard !finished else { return }
        let now = NIODeadline.now()
        guard now < schedule.end else { return finish() }
        tally.recordConnectionOpened()
        requestStartedAt = now
        stepDeadline = now + plan.timeout
        let handler = LoadConnectionHandler(worker: self, plan: plan)
        connection = handler
        handler.connect(on: loop)
    }

    private func finish() {
        guard !finished else { return }
        finished = true
        stepDeadline = .distantFuture
        owner.workerFinished()
    }
}
