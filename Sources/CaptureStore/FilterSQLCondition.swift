import FlowFilter
import GRDB
import ProxyModel

/// A filter expression as an SQL condition over `flows`, either EXACT (the rows it selects are
/// exactly the flows the expression matches) or a SUPERSET (every matching flow is selected,
/// maybe others too, so the caller re-checks each row with `FlowFilter.matches`).
///
/// Exact in SQL: `~d`, `~m` (through `proxyapp_regexp`), `~rule` (`proxyapp_rules_regexp`),
/// `~c`, `~marked`, `~q`, `~s`, `~e`, `~http`, `~tcp`, `~all`, and `~fts` (the full-text index's
/// shards, `FullTextIndex`, which the caller reads in the same transaction; given the slice of
/// ids a reader scans, only the shards and rows of that slice are read). Everything else (URL, headers,
/// bodies, content types, websocket) becomes TRUE, a superset. Combining: `a & b` and `a | b`
/// join both conditions and are exact only when both parts are (a superset of each part gives a
/// superset of the whole); `!a` is exact when `a` is, and TRUE otherwise (the negation of a
/// superset would be a subset).
///
/// `&`/`|` chains are one flat list and `!!x` is `x`; parts nested deeper than `maximumDepth`
/// are TRUE (a superset), so no filter overflows SQLite's parser stack.
///
/// Every condition evaluates to 0 or 1, never NULL (`status IS ?`, `IS NULL`, regex functions
/// that answer 0 for NULL), so `NOT` behaves as Swift's `!`: `!~c 200` selects flows
/// without a status.
struct FilterSQLCondition {
    /// An SQL boolean expression over the columns of `flows`.
    var sql: String
    /// Values for its `?` placeholders, in order.
    var arguments: [DatabaseValue]
    /// True when `sql` selects exactly the matching flows.
    var isExact: Bool

    static let everything = FilterSQLCondition(sql: "1", arguments: [], isExact: true)

    /// Older captures stored a failed tunnel with its CONNECT's 200; `FlowRecord` reads it without
    /// a status, and `~c`/`~s` must agree.
    private static let notAFailedTunnel = "(kind IS NOT '\(FlowKind.tunnel.rawValue)' OR error IS NULL)"
    private static let unknown = FilterSQLCondition(sql: "1", arguments: [], isExact: false)

    init(sql: String, arguments: [DatabaseValue] = [], isExact: Bool = true) {
        self.sql = sql
        self.arguments = arguments
        self.isExact = isExact
    }

    /// Nesting levels (parenthesised lists, `NOT`) the SQL may have; deeper parts become TRUE
    /// (a superset, re-checked in Swift). SQLite's parser stack holds about 100 entries and
    /// every level takes a few.
    static let maximumDepth = 20

    /// SQLite refuses more `?` than this (32766 since 3.32); a filter that needs more is TRUE.
    static let maximumArguments = 30_000

    /// Where full-text searches look: the index's shards, and the range of ids the caller will
    /// read (nil: all); no shards, no match.
    struct FullTextScope {
        var shards: [FullTextIndex.Shard] = []
        var ids: ClosedRange<Int64>?

        /// The shards holding ids of the range.
        var searched: [FullTextIndex.Shard] {
            guard let ids else { return shards }
            return shards.indices.filter { index in
                shards[index].firstID <= ids.upperBound
                    && (index + 1 == shards.count || shards[index + 1].firstID > ids.lowerBound)
            }.map { shards[$0] }
        }
    }

    /// Without a scope a full-text search selects nothing (it is still exact): only
    /// `isExact` may be asked of such a condition. Conditions whose SQL runs are built inside the
    /// read, by `TrafficRepository.condition`.
    init(_ expression: FilterExpression, fullText: FullTextScope = FullTextScope()) {
        self.init(expression, depth: 0, scope: fullText)
        if arguments.count > Self.maximumArguments { self = Self.unknown }
    }

    /// Chains of one operator become one flat list, `(a OR b OR c)`, and `!!x` is `x`, so only
    /// real nesting costs depth.
    private init(_ expression: FilterExpression, depth: Int, scope: FullTextScope) {
        if depth > Self.maximumDepth {
            self = Self.unknown
            return
        }
        switch expression {
        case .and:
            self = Self.list(expression.chainOperands(and: true).map { Self($0, depth: depth + 1, scope: scope) }, by: "AND")
        case .or:
            self = Self.list(expression.chainOperands(and: false).map { Self($0, depth: depth + 1, scope: scope) }, by: "OR")
        case .not(let operand):
            var inner = operand
            var negated = true
            while case .not(let deeper) = inner {
                inner = deeper
                negated.toggle()
            }
            guard negated else {
                self = Self(inner, depth: depth, scope: scope)
                return
            }
            let condition = Self(inner, depth: depth + 1, scope: scope)
            self = condition.isExact
                ? Self(sql: "NOT (\(condition.sql))", arguments: condition.arguments)
                : Self.unknown
        case .domain(let regex):
            self = Self(sql: "\(RegexSQLFunction.name)(?, host)", arguments: [regex.pattern.databaseValue])
        case .method(let regex):
            self = Self(sql: "\(RegexSQLFunction.name)(?, method)", arguments: [regex.pattern.databaseValue])
        case .rule(let regex):
            self = Self(sql: "\(RegexSQLFunction.rulesName)(?, rules)", arguments: [regex.pattern.databaseValue])
        case .statusCode(let code):
            self = Self(sql: "(status IS ? AND \(Self.notAFailedTunnel))", arguments: [code.databaseValue])
        case .requestWithoutResponse:
            self = Self(sql: "(status IS NULL AND kind = ?)", arguments: [FlowKind.http.rawValue.databaseValue])
        case .hasResponse:
            self = Self(sql: "(status IS NOT NULL AND \(Self.notAFailedTunnel))")
        case .hasError:
            self = Self(sql: "error IS NOT NULL")
        case .marked:
            self = Self(sql: "marked <> 0")
        case .replay:
            self = Self(sql: "replay_of IS NOT NULL")
        case .proxy:
            // A proxy's own capture names no proxy on its flows (`Flow.proxyName` is nil).
            self = Self(sql: "0")
        case .http:
            self = Self(sql: "kind = ?", arguments: [FlowKind.http.rawValue.databaseValue])
        case .http2:
            self = Self(sql: "(kind = ? AND http_version = ?)",
                        arguments: [FlowKind.http.rawValue.databaseValue, FilterExpression.http2Version.databaseValue])
        case .tunnel:
            self = Self(sql: "kind = ?", arguments: [FlowKind.tunnel.rawValue.databaseValue])
        case .fullText(let query, let side):
            let match = FullTextIndex.matchText(query, side: side).databaseValue
            var lookups: [String] = []
            var arguments: [DatabaseValue] = []
            for shard in scope.searched {
                let table = shard.table
                if let ids = scope.ids {
                    lookups.append("SELECT rowid FROM \(table) WHERE \(table) MATCH ? AND rowid BETWEEN ? AND ?")
                    arguments += [match, ids.lowerBound.databaseValue, ids.upperBound.databaseValue]
                } else {
                    lookups.append("SELECT rowid FROM \(table) WHERE \(table) MATCH ?")
                    arguments.append(match)
                }
            }
            // A flow removed since it was indexed is not in `flows`: `id IN` leaves its row out.
            self = lookups.isEmpty ? Self(sql: "0")
                : Self(sql: "id IN (\(lookups.joined(separator: " UNION ALL ")))", arguments: arguments)
        case .all:
            self = .everything
        case .url, .contentType, .header, .body, .websocket:
            self = Self.unknown
        }
    }

    /// `(a AND b AND c)`, exact when every part is; TRUE parts are folded away (an `OR` with a
    /// TRUE part is TRUE).
    private static func list(_ parts: [FilterSQLCondition], by sqlOperator: String) -> FilterSQLCondition {
        let isExact = parts.allSatisfy(\.isExact)
        let kept = parts.filter { $0.sql != "1" }
        if kept.isEmpty || (sqlOperator == "OR" && kept.count < parts.count) {
            return FilterSQLCondition(sql: "1", isExact: isExact)
        }
        if kept.count == 1 {
            return FilterSQLCondition(sql: kept[0].sql, arguments: kept[0].arguments, isExact: isExact)
        }
        return grouped(kept, by: sqlOperator, isExact: isExact)
    }

    /// `(a OR b OR …)` in groups of at most 64: SQLite parses `a OR b OR c` into a tree as deep
    /// as the list is long and refuses trees deeper than 1000.
    private static func grouped(_ parts: [FilterSQLCondition], by sqlOperator: String, isExact: Bool)
        -> FilterSQLCondition
    {
        var level = parts
        repeat {
            level = stride(from: 0, to: level.count, by: 64).map { start in
                let group = level[start..<min(start + 64, level.count)]
                guard group.count > 1 else { return group[group.startIndex] }
                return FilterSQLCondition(sql: "(" + group.map(\.sql).joined(separator: " \(sqlOperator) ") + ")",
                                          arguments: group.flatMap(\.arguments), isExact: isExact)
            }
        } while level.count > 1
        return level[0]
    }

    /// `self <operator> other`, exact when both are; a TRUE side is folded away.
    func joined(with other: FilterSQLCondition, by sqlOperator: String) -> FilterSQLCondition {
        Self.list([self, other], by: sqlOperator)
    }
}

extension FilterSQLCondition {
    /// The whole WHERE condition of a query: its filter's condition and its time and marked
    /// constraints (both exact); `fullText` as for an expression.
    init(_ query: FlowQuery, fullText: FullTextScope = FullTextScope()) {
        var condition = query.filter.map { Self($0.expression, fullText: fullText) } ?? .everything
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

extension TrafficRepository {
    /// The WHERE condition of `query` inside a read or write on `db`: the index's shards are read
    /// there, when the filter searches words. `ids`: the range the caller reads, if it reads one.
    static func condition(_ query: FlowQuery, ids: ClosedRange<Int64>? = nil, _ db: Database) throws -> FilterSQLCondition {
        guard query.filter?.expression.searchesFullText == true else { return FilterSQLCondition(query) }
        return FilterSQLCondition(query, fullText: .init(shards: try FullTextIndex.shards(db), ids: ids))
    }
}
