import FlowFilter
import GRDB
import ProxyModel

/// A filter expression as an SQL condition over `flows`, either EXACT (the rows it selects are
/// exactly the flows the expression matches) or a SUPERSET (every matching flow is selected,
/// maybe others too, so the caller re-checks each row with `FlowFilter.matches`).
///
/// Exact in SQL: `~d`, `~m` (through `proxyapp_regexp`), `~c`, `~marked`, `~q`, `~s`, `~e`,
/// `~http`, `~tcp`, `~all`. Everything else (URL, headers, bodies, content types, websocket)
/// becomes TRUE, a superset. Combining: `a & b` and `a | b` join both conditions and are exact
/// only when both parts are (a superset of each part gives a superset of the whole); `!a` is
/// exact when `a` is, and TRUE otherwise (the negation of a superset would be a subset).
///
/// Every condition evaluates to 0 or 1, never NULL (`status IS ?`, `IS NULL`, a regex function
/// that answers 0 for NULL), so `NOT` behaves as Swift's `!`: `!~c 200` selects flows
/// without a status.
struct FilterSQLCondition {
    /// An SQL boolean expression over the columns of `flows`.
    var sql: String
    /// Values for its `?` placeholders, in order.
    var arguments: [DatabaseValue]
    /// True when `sql` selects exactly the matching flows.
    var isExact: Bool

    static let everything = FilterSQLCondition(sql: "1", arguments: [], isExact: true)
    private static let unknown = FilterSQLCondition(sql: "1", arguments: [], isExact: false)

    init(sql: String, arguments: [DatabaseValue] = [], isExact: Bool = true) {
        self.sql = sql
        self.arguments = arguments
        self.isExact = isExact
    }

    init(_ expression: FilterExpression) {
        switch expression {
        case .and(let left, let right):
            self = Self(left).joined(with: Self(right), by: "AND")
        case .or(let left, let right):
            self = Self(left).joined(with: Self(right), by: "OR")
        case .not(let operand):
            let inner = Self(operand)
            self = inner.isExact
                ? Self(sql: "NOT (\(inner.sql))", arguments: inner.arguments)
                : Self.unknown
        case .domain(let regex):
            self = Self(sql: "\(RegexSQLFunction.name)(?, host)", arguments: [regex.pattern.databaseValue])
        case .method(let regex):
            self = Self(sql: "\(RegexSQLFunction.name)(?, method)", arguments: [regex.pattern.databaseValue])
        case .statusCode(let code):
            self = Self(sql: "status IS ?", arguments: [code.databaseValue])
        case .requestWithoutResponse:
            self = Self(sql: "(status IS NULL AND kind = ?)", arguments: [FlowKind.http.rawValue.databaseValue])
        case .hasResponse:
            self = Self(sql: "status IS NOT NULL")
        case .hasError:
            self = Self(sql: "error IS NOT NULL")
        case .marked:
            self = Self(sql: "marked <> 0")
        case .http:
            self = Self(sql: "kind = ?", arguments: [FlowKind.http.rawValue.databaseValue])
        case .tunnel:
            self = Self(sql: "kind = ?", arguments: [FlowKind.tunnel.rawValue.databaseValue])
        case .all:
            self = .everything
        case .url, .contentType, .header, .body, .websocket:
            self = Self.unknown
        }
    }

    /// `self <operator> other`, exact when both are; a TRUE side is folded away.
    func joined(with other: FilterSQLCondition, by sqlOperator: String) -> FilterSQLCondition {
        let isExact = isExact && other.isExact
        let eitherIsTrue = sql == "1" || other.sql == "1"
        if sqlOperator == "OR", eitherIsTrue {
            return FilterSQLCondition(sql: "1", isExact: isExact)
        }
        if sqlOperator == "AND", sql == "1" {
            return FilterSQLCondition(sql: other.sql, arguments: other.arguments, isExact: isExact)
        }
        if sqlOperator == "AND", other.sql == "1" {
            return FilterSQLCondition(sql: sql, arguments: arguments, isExact: isExact)
        }
        return FilterSQLCondition(
            sql: "(\(sql) \(sqlOperator) \(other.sql))", arguments: arguments + other.arguments, isExact: isExact)
    }
}

extension FilterSQLCondition {
    /// The whole WHERE condition of a query: its filter's condition and its time and marked
    /// constraints (both exact).
    init(_ query: FlowQuery) {
        var condition = query.filter.map { Self($0.expression) } ?? .everything
        if let since = query.since {
            condition = condition.joined(
                with: Self(sql: "started_at >= ?", arguments: [FlowRecord.milliseconds(since).databaseValue]), by: "AND")
        }
        if query.markedOnly {
            condition = condition.joined(with: Self(sql: "marked <> 0"), by: "AND")
        }
        self = condition
    }
}
