/// What the workers of one event loop counted. Touched only on that loop, so counting needs no
/// lock; the loops' tallies are merged once the run is over.
final class LoadTally {
    private(set) var figures = LoadFigures()

    /// A response ended; only one that ended inside the measured window counts in the figures.
    func recordResponse(status: Int, nanoseconds: UInt64, measured: Bool) {
        figures.responses += 1
        guard measured else { return }
        figures.completed += 1
        if status >= 200 && status < 400 {
            figures.latency.record(nanoseconds: nanoseconds)
        } else {
            figures.non2xx += 1
        }
    }

    func recordConnectionOpened() {
        figures.connections += 1
    }

    func recordError(_ message: String) {
        figures.errors += 1
        if figures.firstErrors.count < LoadFigures.keptErrors && !figures.firstErrors.contains(message) {
            figures.firstErrors.append(message)
        }
    }
}

/// The figures of a run (or of one event loop's share of it).
struct LoadFigures: Sendable, Equatable {
    static let keptErrors = 5

    /// Responses (any status) that ended inside the measured window.
    var completed = 0
    /// Of those, status outside 2xx/3xx.
    var non2xx = 0
    /// 2xx/3xx responses in the window, from request write (or from the connect, for a request
    /// on a new connection) to the end of the body.
    var latency = LatencyHistogram()
    /// Every response received, warm-up and the tail after the window included.
    var responses = 0
    var connections = 0
    /// Failed connects, CONNECTs, handshakes and requests, the whole run.
    var errors = 0
    /// The first distinct error messages.
    var firstErrors: [String] = []

    mutating func merge(_ other: LoadFigures) {
        completed += other.completed
        non2xx += other.non2xx
        latency.merge(other.latency)
        responses += other.responses
        connections += other.connections
        errors += other.errors
        for message in other.firstErrors where firstErrors.count < Self.keptErrors && !firstErrors.contains(message) {
            firstErrors.append(message)
        }
    }

    /// One line of `key=value` pairs for scripts; times in milliseconds, "n/a" when no 2xx/3xx
    /// response was measured.
    func summaryLine(seconds: Double) -> String {
        func milliseconds(_ fraction: Double) -> String {
            guard let nanoseconds = latency.value(atFraction: fraction) else { return "n/a" }
            return format(Double(nanoseconds) / 1e6, decimals: 3)
        }
        let ok = completed - non2xx
        return "completed=\(completed) seconds=\(format(seconds, decimals: 3)) rps=\(format(Double(ok) / seconds, decimals: 1))"
            + " p50_ms=\(milliseconds(0.5)) p90_ms=\(milliseconds(0.9)) p99_ms=\(milliseconds(0.99)) max_ms=\(milliseconds(1))"
            + " errors=\(errors) non2xx=\(non2xx) responses=\(responses) connections=\(connections)"
    }
}

/// `value` with a fixed number of decimals, without Foundation's formatter.
func format(_ value: Double, decimals: Int) -> String {
    guard value.isFinite else { return "n/a" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int(scaled / scale)
    let fraction = Int(scaled - Double(whole) * scale)
    var text = (value < 0 && scaled > 0 ? "-" : "") + String(whole)
    if decimals > 0 {
        let digits = String(fraction)
        text += "." + String(repeating: "0", count: decimals - digits.count) + digits
    }
    return text
}
