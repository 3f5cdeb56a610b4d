import Foundation
import Rules

/// Reloads the rules file when it changes, so an edit takes effect within a second without a
/// restart: a new, valid file replaces the rules in force (`LiveRules`); a file that does not
/// parse leaves them in force and the error is reported.
///
/// It polls (every 250 ms by default) instead of using inotify: editors save by rewriting in
/// place or by renaming a new file over the old one, and a `stat` per poll sees both. A change
/// of inode, size or modification time leads to a read; identical bytes are not parsed again.
/// A file that disappears counts only after two polls (an editor may be between its unlink and
/// its rename); then no rules are in force until it is back.
public final class RulesFileWatcher: @unchecked Sendable {
    public let path: String
    private let live: LiveRules
    private let report: @Sendable (String) -> Void
    private let queue = DispatchQueue(label: "proxyapp.rules-watcher")
    private var timer: (any DispatchSourceTimer)?
    /// Only touched on `queue`.
    private var lastSignature: FileSignature?
    private var lastText: Data?
    private var missingPolls = 0

    /// - Parameters:
    ///   - initialText: the bytes the rules in force were loaded from (nil: there was no file).
    ///   - report: called (on the watcher's queue) with one line per reload or failed reload.
    public init(path: String, live: LiveRules, initialText: Data?, report: @escaping @Sendable (String) -> Void) {
        self.path = path
        self.live = live
        self.report = report
        self.lastText = initialText
        self.lastSignature = FileSignature(path: path)
    }

    public func start(interval: DispatchTimeInterval = .milliseconds(250)) {
        queue.sync {
            guard timer == nil else { return }
            let timer = DispatchSource.makeTimerSource(queue: queue)
            timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(50))
            timer.setEventHandler { [unowned self] in self.poll() }
            self.timer = timer
            timer.resume()
        }
    }

    public func stop() {
        queue.sync {
            timer?.cancel()
            timer = nil
        }
    }

    /// Polls once, now (tests; the timer calls the same).
    public func checkNow() {
        queue.sync { poll() }
    }

    private func poll() {
        let signature = FileSignature(path: path)
        guard let signature else {
            if lastText != nil {
                missingPolls += 1
                if missingPolls >= 2 {
                    lastText = nil
                    lastSignature = nil
                    live.replace(with: .empty, source: nil)
                    report("rules: \(path) was removed: no rules are in force")
                }
            }
            return
        }
        missingPolls = 0
        guard signature != lastSignature else { return }
        lastSignature = signature
        do {
            let data = try RulesFile.read(path: path)
            guard data != lastText else { return }
            lastText = data
            let rules = try RulesFile.parse(data: data, file: path)
            live.replace(with: rules, source: path)
            report("rules: reloaded \(path): \(rules.enabledCount) rule\(rules.enabledCount == 1 ? "" : "s") active")
        } catch {
            live.reloadFailed(error.description)
            report("rules: \(path) not reloaded, the previous rules stay in force:\n\(error.description)")
        }
    }
}
