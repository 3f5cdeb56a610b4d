// Measures the terminal UI on a large capture (scripts/bench's `tui` phase): the time from
// opening the database to the first complete frame, and from a key press to the frame that
// shows its result, driving the real `TUIController` at 200×50 the way the terminal loop does
// (tick, render, diff against the previous frame) but without a terminal. Build it in release:
//
//   swift build -c release --product proxyapp-bench-tui
//   .build/release/proxyapp-bench-tui CAPTURE.sqlite
//
// Prints one `tui  WHAT  VALUE  UNIT` line per figure. Peak memory is measured around it by
// scripts/bench (GNU time).
import CaptureStore
import Dispatch
import FlowFilter
import Foundation
import ProxyAppUI
import TerminalUI

guard CommandLine.arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: proxyapp-bench-tui CAPTURE.sqlite\n".utf8))
    exit(2)
}
let path = CommandLine.arguments[1]

func report(_ what: String, _ value: String, _ unit: String = "") {
    print("tui".padding(toLength: 8, withPad: " ", startingAt: 0) + " "
          + what.padding(toLength: 36, withPad: " ", startingAt: 0) + " "
          + String(repeating: " ", count: max(0, 14 - value.count)) + value + (unit.isEmpty ? "" : " " + unit))
}

func milliseconds(since start: UInt64) -> Double {
    Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
}

func formatted(_ value: Double) -> String { String(format: "%.1f", value) }

/// Renders turns (as the terminal loop does) until `done` holds; returns the milliseconds taken.
var shown: ScreenGrid?
var diffBytes = 0
@MainActor func turnsUntil(_ controller: TUIController, from start: UInt64, _ done: (TUIController) -> Bool) -> Double {
    while true {
        controller.tick()
        let frame = controller.render()
        if frame != shown {
            diffBytes = ScreenDiff.bytes(from: shown, to: frame).count
            shown = frame
        }
        if done(controller) { return milliseconds(since: start) }
        if milliseconds(since: start) > 60_000 {
            FileHandle.standardError.write(Data("proxyapp-bench-tui: no complete frame within 60 s\n".utf8))
            exit(1)
        }
        usleep(2_000)  // a turn every ~2 ms: fine-grained, without starving the feed's queue
    }
}

// The expected count comes from a connection of its own, before the clock starts.
let total: Int
do {
    total = try TrafficRepository(database: try TrafficDatabase.openReadOnly(path: path)).count()
} catch {
    FileHandle.standardError.write(Data("proxyapp-bench-tui: cannot read \(path): \(error)\n".utf8))
    exit(1)
}
let openStart = DispatchTime.now().uptimeNanoseconds
let repository: TrafficRepository
do {
    repository = TrafficRepository(database: try TrafficDatabase.openReadOnly(path: path))
} catch {
    FileHandle.standardError.write(Data("proxyapp-bench-tui: cannot open \(path): \(error)\n".utf8))
    exit(1)
}
let feed = FlowListFeed(repository: repository)
feed.start()
let controller = TUIController(repository: repository, feed: feed,
                               context: TUIContext(readOnly: true, version: "bench"))
controller.resize(ScreenSize(width: 200, height: 50))
let first = turnsUntil(controller, from: openStart) { $0.isListSettled && $0.listProgress.rows > 0 }
report("flows in the capture", String(total))
report("first frame (the newest flows)", formatted(first), "ms")
let all = turnsUntil(controller, from: openStart) { $0.isListSettled && $0.listProgress.rows == total && !$0.listProgress.scanning }
report("every flow id read (from the open)", formatted(all), "ms")

/// One key (or typed line) and the frame that shows its result.
@MainActor func measure(_ name: String, keys: [Key], until done: @escaping (TUIController) -> Bool = { $0.isListSettled }) {
    let start = DispatchTime.now().uptimeNanoseconds
    for key in keys { controller.handle(key) }
    report(name, formatted(turnsUntil(controller, from: start, done)), "ms")
}

measure("key: Home", keys: [.home])
measure("key: PageDown", keys: [.pageDown])
measure("key: PageDown again", keys: [.pageDown])
measure("key: End", keys: [.end])
measure("key: j, j, j (3 frames, last)", keys: [.character("k"), .character("k"), .character("k")])
let filterKeys = { (text: String) -> [Key] in [.character("/"), .control("u")] + text.map { .character($0) } + [.enter] }
measure("filter ~m POST (SQL): first frame", keys: filterKeys("~m POST")) { $0.isListSettled && $0.listProgress.rows > 0 }
let exactStart = DispatchTime.now().uptimeNanoseconds
let exactDone = turnsUntil(controller, from: exactStart) { !$0.listProgress.scanning && $0.isListSettled }
report("filter ~m POST: rest of the scan", formatted(exactDone), "ms")
report("filter ~m POST: flows matched", String(controller.listProgress.rows))
measure("filter ~u login (Swift): first frame", keys: filterKeys("~u login")) { $0.isListSettled && $0.listProgress.rows > 0 }
let urlStart = DispatchTime.now().uptimeNanoseconds
let urlDone = turnsUntil(controller, from: urlStart) { !$0.listProgress.scanning && $0.isListSettled }
report("filter ~u login: rest of the scan", formatted(urlDone), "ms")
report("filter ~u login: flows matched", String(controller.listProgress.rows))
// Word searches through the full-text index: a common word (one flow in ten) and a rare one.
for (name, filter) in [("~fts paragraph", "~fts paragraph"), ("~fts 'req 777777'", "~fts 'req 777777'")] {
    measure("filter \(name): first frame", keys: filterKeys(filter)) { $0.isListSettled && $0.listProgress.rows > 0 }
    let searchStart = DispatchTime.now().uptimeNanoseconds
    let searchDone = turnsUntil(controller, from: searchStart) { !$0.listProgress.scanning && $0.isListSettled }
    report("filter \(name): rest of the scan", formatted(searchDone), "ms")
    report("filter \(name): flows matched", String(controller.listProgress.rows))
    let query = FlowQuery(filter: try! FlowFilter(parsing: filter))
    let countStart = DispatchTime.now().uptimeNanoseconds
    let counted = try! repository.count(matching: query)
    report("count \(name) (\(counted))", formatted(milliseconds(since: countStart)), "ms")
    let hitsStart = DispatchTime.now().uptimeNanoseconds
    let search = try! FullTextQuery(parsing: filter.dropFirst(5).trimmingCharacters(in: CharacterSet(charactersIn: "'")))
    let hits = try! repository.latestFullTextHits(search, matching: query, limit: 20)
    report("search \(name): newest \(hits.count)", formatted(milliseconds(since: hitsStart)), "ms")
}
measure("filter cleared: first frame", keys: filterKeys("")) { $0.isListSettled && $0.listProgress.rows > 0 }
let clearedStart = DispatchTime.now().uptimeNanoseconds
let clearedDone = turnsUntil(controller, from: clearedStart) { $0.isListSettled && $0.listProgress.rows == total && !$0.listProgress.scanning }
report("filter cleared: rest of the ids", formatted(clearedDone), "ms")
measure("key: Home after the filter", keys: [.home])
report("last frame's update", String(diffBytes), "bytes")
feed.stop()
