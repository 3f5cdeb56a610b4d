import Foundation
import ProxyModel

/// What a flow's timings read after a HAR export and import, following the conventions
/// `HARTimings` documents for the writer (and the reader inverts): values to the microsecond;
/// `send`, `wait` and `receive` are required in HAR, so one that did not happen comes back as 0;
/// a flow with no phase measured has its duration as `wait`; a tunnel's life after connecting
/// is its `receive`.
///
/// Written from the documentation, not from the writer's code, so a test comparing imported
/// flows with captured ones checks the writer and the reader against the promise.
enum HARTimingsExpectation {
    static var phases: [(String, WritableKeyPath<FlowTimings, Double>)] {
        [("dns", \.dns), ("connect", \.connect), ("tls", \.tls), ("send", \.send), ("wait", \.wait),
         ("receive", \.receive)]
    }

    static func afterImport(of flow: Flow) -> FlowTimings {
        let timings = flow.timings
        let measured = phases.contains { timings[keyPath: $0.1] >= 0 }
        var expected = FlowTimings(dns: timings.dns, connect: timings.connect, tls: timings.tls,
                                   send: max(timings.send, 0), wait: max(timings.wait, 0),
                                   receive: max(timings.receive, 0))
        guard let duration = flow.durationMilliseconds else { return expected }
        if flow.kind == .tunnel {
            let before = [timings.dns, timings.connect, timings.tls, timings.send, timings.wait].map { max($0, 0) }
            expected.receive = max(duration - before.reduce(0, +), 0)
        } else if !measured {
            expected.wait = duration
        }
        return expected
    }
}
