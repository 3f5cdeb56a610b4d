import NIOCore

/// The workers of one event loop with their tally and a watchdog that times out stuck steps
/// (one timer for all workers rather than one per request). Its future completes with the
/// loop's figures when every worker finished, or fails when the loop gives up.
final class LoopLoad {
    private static let watchdogInterval = TimeAmount.milliseconds(100)

    private let plan: LoadPlan
    private let schedule: LoadSchedule
    private let loop: any EventLoop
    private let workerCount: Int
    private let tally = LoadTally()
    private var workers: [any LoadClient] = []
    private var running = 0
    private var ended = false
    private var watchdog: Scheduled<Void>?
    private let promise: EventLoopPromise<LoadFigures>

    init(plan: LoadPlan, schedule: LoadSchedule, workerCount: Int, loop: any EventLoop) {
        self.plan = plan
        self.schedule = schedule
        self.workerCount = workerCount
        self.loop = loop
        promise = loop.makePromise()
    }

    /// Starts the workers; call on `loop`.
    func start() -> EventLoopFuture<LoadFigures> {
        workers = (0..<workerCount).map { _ -> any LoadClient in
            plan.http2Streams == nil
                ? LoadWorker(plan: plan, schedule: schedule, tally: tally, loop: loop, owner: self)
                : LoadHTTP2Worker(plan: plan, schedule: schedule, tally: tally, loop: loop, owner: self)
        }
        running = workers.count
        armWatchdog()
        for worker in workers { worker.start() }
        return promise.futureResult
    }

    func workerFinished() {
        running -= 1
        if running == 0 { end(.success(tally.figures)) }
    }

    /// True when nothing ever succeeded on this loop and every worker failed twice over: the
    /// target is unreachable or refuses us, and waiting out the duration would only hide it.
    func shouldGiveUp() -> Bool {
        tally.figures.responses == 0 && tally.figures.errors >= max(8, 2 * workerCount)
    }

    func giveUp() {
        end(.failure(GiveUp(figures: tally.figures)))
    }

    /// The run stopped early because every attempt failed; carries the errors seen.
    struct GiveUp: Error {
        let figures: LoadFigures
    }

    private func end(_ result: Result<LoadFigures, any Error>) {
        guard !ended else { return }
        ended = true
        watchdog?.cancel()
        watchdog = nil
        let workers = self.workers
        self.workers = []  // the workers hold this object: break the cycle
        for worker in workers where !worker.finished { worker.stop() }
        promise.completeWith(result)
    }

    private func armWatchdog() {
        watchdog = loop.assumeIsolated().scheduleTask(in: Self.watchdogInterval) {
            let now = NIODeadline.now()
            for worker in self.workers { worker.checkTimeout(now: now) }
            if !self.workers.isEmpty { self.armWatchdog() }
        }
    }
}

/// What `LoopLoad` starts, watches and stops: an HTTP/1 `LoadWorker` (one request in flight) or
/// a `LoadHTTP2Worker` (one connection with many streams in flight).
/// What every load client of a loop works from: the plan, the schedule, the loop's tally, the
/// loop itself and the `LoopLoad` it reports to. `LoadWorker` (HTTP/1) and `LoadHTTP2Worker`
/// build on it.
class LoadClientBase {
    let plan: LoadPlan
    let schedule: LoadSchedule
    let tally: LoadTally
    let loop: any EventLoop
    let owner: LoopLoad

    init(plan: LoadPlan, schedule: LoadSchedule, tally: LoadTally, loop: any EventLoop, owner: LoopLoad) {
        self.plan = plan
        self.schedule = schedule
        self.tally = tally
        self.loop = loop
        self.owner = owner
    }
}

protocol LoadClient: AnyObject {
    var finished: Bool { get }
    func start()
    /// Times out the current step if its deadline passed (called by the loop's watchdog).
    func checkTimeout(now: NIODeadline)
    /// Closes the connection and does nothing more (the run was aborted).
    func stop()
}
