import FlowFilter
import Foundation
import GRDB
import LinearRegex

/// `proxyapp_regexp(pattern, value)`: the filter language's regex test, inside SQL.
///
/// The SQL half of a filter must answer exactly as `FlowFilter.matches`, so it compiles
/// patterns through the same `FilterRegex` (case-insensitive RE2 search, linear in each value, so
/// no pattern can stall a query). It returns 1 or 0, never NULL (a NULL value does not match), so
/// SQL's three-valued logic never differs from Swift's. Compiled patterns are cached across rows
/// and connections.
///
/// `proxyapp_rules_regexp(pattern, rules)` is its twin for `~rule`: it reads the `rules` column
/// through `AppliedRulesJSON.decode`, as `FlowRecord` does, and answers 1 when any name matches
/// (0 for NULL, for no names, and for a value that is not an array of strings).
/// `TrafficDatabase` registers both on every connection it opens.
enum RegexSQLFunction {
    static let name = "proxyapp_regexp"
    static let rulesName = "proxyapp_rules_regexp"

    static let function = DatabaseFunction(name, argumentCount: 2, pure: true) { arguments in
        guard let pattern = String.fromDatabaseValue(arguments[0]) else {
            throw DatabaseError(message: "\(name): the pattern must be text")
        }
        guard let value = String.fromDatabaseValue(arguments[1]) else { return false }
        return try cache.regex(for: pattern).matches(value)
    }

    static let rulesFunction = DatabaseFunction(rulesName, argumentCount: 2, pure: true) { arguments in
        guard let pattern = String.fromDatabaseValue(arguments[0]) else {
            throw DatabaseError(message: "\(rulesName): the pattern must be text")
        }
        let names = AppliedRulesJSON.decode(String.fromDatabaseValue(arguments[1]))
        if names.isEmpty { return false }
        let regex = try cache.regex(for: pattern)
        return names.contains(where: regex.matches)
    }

    private static let cache = FilterRegexCache()
}

/// Compiled patterns by text, at most `capacity` of them (a new filter's patterns replace an
/// old filter's once the cache is full).
private final class FilterRegexCache: @unchecked Sendable {
    // @unchecked: every access to `regexes` holds `lock`; FilterRegex itself is Sendable.
    private let lock = NSLock()
    private var regexes: [String: FilterRegex] = [:]
    private let capacity = 64

    func regex(for pattern: String) throws -> FilterRegex {
        if let cached = lock.withLock({ regexes[pattern] }) { return cached }
        let regex: FilterRegex
        do throws(LinearRegexError) {
            regex = try FilterRegex(pattern)
        } catch {
            throw DatabaseError(message: "\(RegexSQLFunction.name): bad regex \(pattern): \(error.reason)")
        }
        lock.withLock {
            if regexes.count >= capacity { regexes.removeAll(keepingCapacity: true) }
            regexes[pattern] = regex
        }
        return regex
    }
}
