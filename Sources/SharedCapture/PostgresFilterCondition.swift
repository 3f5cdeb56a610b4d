import CaptureStore
import FlowFilter
import ProxyModel

/// A filter as a PostgreSQL condition over `proxyapp_flows`: EXACT (the rows it selects are the
/// matching flows) or a SUPERSET (the reader checks each selected row again in Swift), as
/// `FilterSQLCondition` is for the SQLite capture.
///
/// Exact: `~c`, `~q`, `~s`, `~e`, `~marked`, `~replay`, `~http`, `~http2`, `~tcp`, `~all`, the
/// query's `since` and `markedOnly`, and `!`, `&`, `|` of exact parts. The regex predicates
/// (`~d`, `~u`, `~proxy`, headers, bodies…) and `~fts` are TRUE here, a superset: PostgreSQL's
/// regex dialect and case folding are not the filter language's (RE2 syntax, Unicode case
/// folding), so translating them could drop a matching flow.
///
/// Every value is a number or one of the model's own constants, written into the SQL as a
/// literal: no user text ever reaches the statement. Every condition is true or false, never
/// NULL (`IS NOT DISTINCT FROM`, `IS NULL`), so `NOT` behaves as Swift's `!`. Chains of one
/// operator are one flat list; parts nested deeper than `maximumDepth` are TRUE.
struct PostgresFilterCondition: Equatable {
    var sql: String
    var isExact: Bool

    static let everything = PostgresFilterCondition(sql: "true", isExact: true)
    private static let unknown = PostgresFilterCondition(sql: "true", isExact: false)
    static let maximumDepth = 20

    init(sql: String, isExact: Bool = true) {
        self.sql = sql
        self.isExact = isExact
    }

    /// The whole WHERE condition of `query`.
    init(_ query: FlowQuery) {
        var parts = [query.filter.map { Self($0.expression, depth: 0) } ?? .everything]
        if let since = query.since { parts.append(Self(sql: "started_at >= \(CaptureTime.milliseconds(since))")) }
        if query.markedOnly { parts.append(Self(sql: "marked")) }
        self = Self.list(parts, by: "AND")
    }

    private init(_ expression: FilterExpression, depth: Int) {
        guard depth <= Self.maximumDepth else {
            self = Self.unknown
            return
        }
        let http = "kind = '\(FlowKind.http.rawValue)'"
        switch expression {
        case .and, .or:
            let isAnd = if case .and = expression { true } else { false }
            self = Self.list(expression.chainOperands(and: isAnd).map { Self($0, depth: depth + 1) }, by: isAnd ? "AND" : "OR")
        case .not(let operand):
            var inner = operand
            var negated = true
            while case .not(let deeper) = inner {
                inner = deeper
                negated.toggle()
            }
            let condition = Self(inner, depth: depth + 1)
            self = !negated ? condition : condition.isExact ? Self(sql: "NOT (\(condition.sql))") : Self.unknown
        case .statusCode(let code): self = Self(sql: "status IS NOT DISTINCT FROM \(code)")
        case .requestWithoutResponse: self = Self(sql: "(status IS NULL AND \(http))")
        case .hasResponse: self = Self(sql: "status IS NOT NULL")
        case .hasError: self = Self(sql: "error IS NOT NULL")
        case .marked: self = Self(sql: "marked")
        case .replay: self = Self(sql: "replay_of IS NOT NULL")
        case .http: self = Self(sql: http)
        case .http2: self = Self(sql: "(\(http) AND http_version = '\(FilterExpression.http2Version)')")
        case .tunnel: self = Self(sql: "kind = '\(FlowKind.tunnel.rawValue)'")
        case .all: self = .everything
        case .domain, .url, .method, .contentType, .header, .body, .rule, .proxy, .websocket, .fullText:
            self = Self.unknown
        }
    }

    /// `(a AND b …)`, exact when every part is; TRUE parts are folded away (an `OR` with a TRUE
    /// part is TRUE).
    private static func list(_ parts: [PostgresFilterCondition], by sqlOperator: String) -> PostgresFilterCondition {
        let isExact = parts.allSatisfy(\.isExact)
        let kept = parts.filter { $0.sql != "true" }
        if kept.isEmpty || (sqlOperator == "OR" && kept.count < parts.count) {
            return PostgresFilterCondition(sql: "true", isExact: isExact)
        }
        if kept.count == 1 { return PostgresFilterCondition(sql: kept[0].sql, isExact: isExact) }
        return PostgresFilterCondition(sql: "(" + kept.map(\.sql).joined(separator: " \(sqlOperator) ") + ")",
                                       isExact: isExact)
    }
}
