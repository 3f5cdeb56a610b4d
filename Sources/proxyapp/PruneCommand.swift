import ArgumentParser
import CaptureStore
import Foundation

/// `proxyapp prune`: removes old flows from the capture on demand, with their body files, the
/// same way a running proxy keeps within `--max-age` and `--max-flows`. Safe while a proxy
/// writes to the same capture.
struct PruneCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prune", abstract: "Remove old flows from the capture now, oldest first.",
        discussion: "Example: proxyapp prune --older-than 7d --keep 100000 --unmarked")

    @OptionGroup var data: DataDirectoryOptions

    @Option(help: ArgumentHelp("Remove flows that started longer ago than this, e.g. 7d, 12h, 90m.", valueName: "duration"))
    var olderThan: DurationArgument?

    @Option(help: ArgumentHelp("Keep only the newest this many flows (0 removes them all).", valueName: "count"))
    var keep: Int?

    @Flag(help: "Remove only unmarked flows: marked ones (TUI m) stay, and --keep counts only the others.")
    var unmarked = false

    func validate() throws {
        guard olderThan != nil || keep != nil else {
            throw ValidationError("Say what to remove: --older-than 7d, --keep 10000, or both.")
        }
        if let keep, keep < 0 { throw ValidationError("--keep takes 0 or more flows; got \(keep).") }
    }

    func run() throws {
        let repository = try data.openExistingCapture(forWriting: true)
        let policy = RetentionPolicy(maxFlows: keep, maxAge: olderThan?.timeInterval, keepMarked: unmarked)
        let sizeBefore = try repository.captureSize()
        let outcome = try repository.enforce(policy)
        let left = try repository.count()
        let sizeAfter = try repository.captureSize()
        print("Removed \(outcome.flowsRemoved) \(outcome.flowsRemoved == 1 ? "flow" : "flows"); \(left) kept "
              + "(capture \(ByteCount.format(sizeBefore)) -> \(ByteCount.format(sizeAfter))).")
    }
}
