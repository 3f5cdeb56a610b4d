import NIOCore
import NIOPosix

/// One load run: spreads the workers over a few event loops, waits until they all finished
/// (warm-up, measured window, and the requests still in flight at its end), then merges what
/// each loop counted.
struct LoadRun {
    let plan: LoadPlan
    let connections: Int
    let threads: Int
    let warmup: TimeAmount
    let duration: TimeAmount

    /// Blocks until the run is over. Throws `LoopLoad.GiveUp` when a loop saw only failures.
    func execute() throws -> LoadFigures {
        let group = MultiThreadedEventLoopGroup(numberOfThreads: threads)
        defer { try? group.syncShutdownGracefully() }
        let start = NIODeadline.now()
        let schedule = LoadSchedule(measuredFrom: start + warmup, end: start + warmup + duration)
        var loads: [EventLoopFuture<LoadFigures>] = []
        for (index, loop) in group.makeIterator().enumerated() {
            let count = connections / threads + (index < connections % threads ? 1 : 0)
            guard count > 0 else { continue }
            let plan = self.plan
            loads.append(loop.flatSubmit {
                LoopLoad(plan: plan, schedule: schedule, workerCount: count, loop: loop).start()
            })
        }
        let perLoop = try EventLoopFuture.whenAllSucceed(loads, on: group.next()).wait()
        var figures = LoadFigures()
        for loopFigures in perLoop { figures.merge(loopFigures) }
        return figures
    }
}
