import Foundation

/// A gate that work on other threads waits at until the test opens it, counting who came:
/// stands in for a DNS server that does not answer or a rewrite that runs for long.
final class Gate: @unchecked Sendable {
    private let condition = NSCondition()
    private var open = false
    private var arrivals: [String] = []
    private var departures = 0

    /// Blocks the calling thread until the gate opens (at most 30 s, so a broken test ends).
    func pass(_ name: String = "") {
        condition.lock()
        defer { condition.unlock() }
        arrivals.append(name)
        condition.broadcast()
        let deadline = Date().addingTimeInterval(30)
        while !open && Date() < deadline {
            _ = condition.wait(until: deadline)
        }
        departures += 1
        condition.broadcast()
    }

    /// Waits (at most 10 s) until `count` callers have gone through; false if they did not.
    func waitForDepartures(_ count: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(10)
        while departures < count && Date() < deadline {
            _ = condition.wait(until: deadline)
        }
        return departures >= count
    }

    func openGate() {
        condition.lock()
        open = true
        condition.broadcast()
        condition.unlock()
    }

    /// How many times `name` arrived at the gate so far.
    func arrivals(of name: String) -> Int {
        condition.lock()
        defer { condition.unlock() }
        return arrivals.filter { $0 == name }.count
    }

    /// Waits (at most 10 s) until `count` arrivals in all; false if they did not come.
    func waitForArrivals(_ count: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date().addingTimeInterval(10)
        while arrivals.count < count && Date() < deadline {
            _ = condition.wait(until: deadline)
        }
        return arrivals.count >= count
    }
}
