import FlowFilter
import Foundation

/// Which stored flows a reader wants: a filter expression, a start time and the marked flag.
///
/// `TrafficRepository.forEachFlow(matching:)` turns it into SQL as far as it can (see
/// `FilterSQLCondition`) and checks the rest of the filter in Swift.
public struct FlowQuery: Sendable {
    /// Flows must match this expression; nil keeps every flow.
    public var filter: FlowFilter?
    /// Flows must have started at or after this instant (millisecond precision); nil: any time.
    public var since: Date?
    /// Only flows the user marked.
    public var markedOnly: Bool

    public init(filter: FlowFilter? = nil, since: Date? = nil, markedOnly: Bool = false) {
        self.filter = filter
        self.since = since
        self.markedOnly = markedOnly
    }

    /// Whether SQL alone selects the flows; false when rows must also be checked in Swift (a
    /// URL or header regex, say), which costs microseconds per flow read.
    public var isAnsweredBySQL: Bool {
        FilterSQLCondition(self).isExact
    }
}
