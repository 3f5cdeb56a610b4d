import Foundation
import LinearRegex
import ProxyCore
import SeededRandom
import XCTest
@testable import Rules

/// The host index: it offers every rule that may match, in file order, once; and a set using
/// it plans exactly as a scan of every rule would.
final class RuleIndexTests: XCTestCase {
    private func rule(_ name: String, _ hosts: String..., enabled: Bool = true) -> Rule {
        Rule(name: name, enabled: enabled, match: RuleMatch(hosts: try! HostPatternList(parsing: hosts)),
             action: .block(BlockAction()))
    }

    private func candidates(_ index: RuleIndex, _ host: String) -> [Int] {
        var found: [Int] = []
        index.forEachCandidate(host: host) { found.append($0); return true }
        return found
    }

    /// Exact, subdomain and scanned (`*`, glob) candidates merge in file order, each once;
    /// disabled rules are never offered.
    func testCandidates() {
        let index = RuleIndex([
            rule("any", "*"),
            rule("exact", "a.b.com"),
            rule("both", "a.b.com", "*.b.com"),
            rule("off", "a.b.com", enabled: false),
            rule("sub", "*.com"),
            rule("glob", "a.*"),
            rule("other", "c.org"),
        ])
        XCTAssertFalse(index.isEmpty)
        XCTAssertEqual(candidates(index, "a.b.com"), [0, 1, 2, 4, 5])
        XCTAssertEqual(candidates(index, "x.b.com"), [0, 2, 4, 5])
        XCTAssertEqual(candidates(index, "c.org"), [0, 5, 6])
        XCTAssertEqual(candidates(index, "zzz"), [0, 5])
    }

    /// The walk stops as soon as the body returns false.
    func testStopsEarly() {
        let index = RuleIndex([rule("1", "*"), rule("2", "*.a.com"), rule("3", "*.com")])
        var seen: [Int] = []
        index.forEachCandidate(host: "x.a.com") { seen.append($0); return seen.count < 2 }
        XCTAssertEqual(seen, [0, 1])
    }

    /// An index of disabled rules only is empty.
    func testEmpty() {
        XCTAssertTrue(RuleIndex([]).isEmpty)
        XCTAssertTrue(RuleIndex([rule("off", "*", enabled: false)]).isEmpty)
    }

    // MARK: - Randomized comparison with a scan

    /// ~300 random rules (exact hosts, `*.suffix`, `*`, globs; random conditions and enabled
    /// flags) and 2,000 random requests: the plan, the CONNECT block and the DNS override are
    /// those of a plain scan in file order. The seed is fixed, so a failure repeats.
    func testIndexAgreesWithAScan() {
        var random = SeededRandom(seed: 0x5EED_2024)
        let generator = RandomRules()
        let rules = (0..<300).map { generator.rule(number: $0, &random) }
        let set = RuleSet(rules: rules)
        var hits = [0, 0, 0, 0, 0, 0]
        var winners = Set<String>()
        for number in 0..<2_000 {
            let request = generator.request(&random)
            let expected = ScanReference.plan(rules, request)
            let plan = set.plan(for: request)
            let found = [plan.block?.name, plan.mapLocal?.name, plan.mapRemote?.name, plan.rewrite?.name, plan.upstreamProxy?.name,
                         plan.throttle?.name]
            if found != expected {
                return XCTFail("request \(number) \(request.scheme)://\(request.host):\(request.port)\(request.pathAndQuery) "
                               + "\(request.method): \(found) instead of \(expected)")
            }
            for kind in 0..<6 where found[kind] != nil { hits[kind] += 1 }
            winners.formUnion(found.compactMap { $0 })
            XCTAssertEqual(set.blockingConnect(host: request.host, port: request.port)?.name,
                           ScanReference.blockingConnect(rules, request.host, request.port))
            XCTAssertEqual(set.dnsOverride(host: request.host, port: request.port)?.name,
                           ScanReference.dns(rules, request.host, request.port))
            XCTAssertEqual(set.upstreamProxyForConnect(host: request.host, port: request.port)?.name,
                           ScanReference.connectDecided(rules, .upstreamProxy, request.host, request.port))
            XCTAssertEqual(set.throttleForConnect(host: request.host, port: request.port)?.name,
                           ScanReference.connectDecided(rules, .throttle, request.host, request.port))
        }
        for kind in 0..<6 {
            XCTAssertTrue((200...1_900).contains(hits[kind]), "kind \(kind) matched \(hits[kind]) of 2,000 requests: hits and misses both count")
        }
        XCTAssertGreaterThan(winners.count, 100, "many different rules win")
    }
}

/// The draws the random rules and requests use.
extension SeededRandom {
    mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
    mutating func chance(_ percent: Int) -> Bool { below(100) < percent }
    mutating func pick<T>(_ items: [T]) -> T { items[below(items.count)] }
}

/// Random rules and requests over a small world of hosts, so that they meet often.
struct RandomRules {
    let labels = ["a", "b", "api", "cdn", "www", "x-1"]
    let tlds = ["com", "net", "io"]
    let globs = ["a*.com", "*.b.*", "api.?.net", "*api*", "cdn.*", "?.com", "www.*.io", "*-1.*"]
    let paths = ["/", "/api/users", "/api/", "/static/app.js", "/data.json", "/abc", "/api/x?q=1", "/data.json?v=2"]
    let globPaths = ["/api/*", "*.json", "/", "/static/*", "/a?c", "/api*"]
    let regexPaths = ["^/api", "q=1", "json$", "^/$"]

    func host(_ random: inout SeededRandom) -> String {
        random.chance(5) ? random.pick(["127.0.0.1", "::1", "com"]) : name(&random)
    }

    func name(_ random: inout SeededRandom) -> String {
        let depth = 1 + random.below(3)
        return ((0..<depth).map { _ in random.pick(labels) } + [random.pick(tlds)]).joined(separator: ".")
    }

    func pattern(_ random: inout SeededRandom) -> String {
        switch random.below(100) {
        case 0..<50: return host(&random)
        case 50..<85:
            let parts = name(&random).split(separator: ".")
            return "*." + parts.suffix(2 + random.below(parts.count - 1)).joined(separator: ".")
        case 85..<87: return "*." + random.pick(tlds)
        case 87: return "*"
        default: return random.pick(globs)
        }
    }

    func rule(number: Int, _ random: inout SeededRandom) -> Rule {
        let patterns = (0...random.below(3)).map { _ in try! HostPattern(pattern(&random)) }
        let kind = random.pick([RuleKind.block, .block, .mapLocal, .mapRemote, .rewrite, .rewrite, .dns, .upstreamProxy, .throttle])
        var match = RuleMatch(hosts: HostPatternList(patterns))
        if random.chance(25) { match.port = random.pick([80, 443, 8080]) }
        if kind != .dns {
            if random.chance(20) { match.schemes = random.pick([["http"], ["https"], ["http", "https"]] as [Set<String>]) }
            if random.chance(20) { match.methods = random.pick([["GET"], ["POST"], ["GET", "POST"]] as [Set<String>]) }
            if random.chance(30) {
                if random.chance(70) {
                    match.path = .glob(PathGlob(random.pick(globPaths)))
                } else {
                    let source = random.pick(regexPaths)
                    match.path = .regex(try! LinearRegex(source))
                }
            }
        }
        if patterns.contains(where: { $0.kind == .any }) && match.port == nil && match.methods == nil {
            // A bare `*` rule would match every request and hide every later rule of its kind.
            match.port = random.pick([80, 443, 8080])
        }
        let action: RuleAction
        switch kind {
        case .block: action = .block(BlockAction())
        case .mapLocal: action = .mapLocal(MapLocalAction(source: .file("/dev/null")))
        case .mapRemote: action = .mapRemote(MapRemoteAction(destination: RemoteDestination(scheme: "http", host: "x", port: 80)))
        case .rewrite: action = .rewrite(RewriteAction(status: 200))
        case .dns: action = .dns(DNSOverride(addresses: ["127.0.0.1"]))
        case .upstreamProxy: action = .upstreamProxy(random.chance(50) ? .direct
            : .proxy(UpstreamProxy(scheme: .http, host: "p", port: 3128)))
        case .throttle: action = .throttle(ThrottleProfile(downBytesPerSecond: 1_000))
        }
        return Rule(name: "r\(number)", enabled: random.chance(80), match: match, action: action)
    }

    func request(_ random: inout SeededRandom) -> RequestFacts {
        RequestFacts(scheme: random.pick(["http", "https"]), host: host(&random), port: random.pick([80, 443, 8080]),
                     method: random.pick(["GET", "POST", "PUT"]), pathAndQuery: random.pick(paths))
    }
}

/// What the index must agree with: every rule, in file order, each condition checked here.
enum ScanReference {
    static func conditionsHold(_ match: RuleMatch, _ request: RequestFacts) -> Bool {
        guard match.hosts.patterns.contains(where: { $0.matches(normalizedHost: request.host) }) else { return false }
        if let port = match.port, port != request.port { return false }
        if let schemes = match.schemes, !schemes.contains(request.scheme) { return false }
        if let methods = match.methods, !methods.contains(request.method) { return false }
        switch match.path {
        case nil:
            return true
        case .glob(let glob)?:
            let path = request.pathAndQuery.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
            return glob.matches(path)
        case .regex(let regex)?:
            // NSRegularExpression as an independent reference (these patterns mean the same in ICU and RE2).
            let reference = try! NSRegularExpression(pattern: regex.pattern)
            let text = request.pathAndQuery as NSString
            return reference.firstMatch(in: request.pathAndQuery, range: NSRange(location: 0, length: text.length)) != nil
        }
    }

    static func plan(_ rules: [Rule], _ request: RequestFacts) -> [String?] {
        [RuleKind.block, .mapLocal, .mapRemote, .rewrite, .upstreamProxy, .throttle].map { kind in
            rules.first { $0.enabled && $0.kind == kind && conditionsHold($0.match, request) }?.name
        }
    }

    static func blockingConnect(_ rules: [Rule], _ host: String, _ port: Int) -> String? {
        connectDecided(rules, .block, host, port)
    }

    /// The first enabled rule of `kind` a CONNECT to `host`:`port` alone decides.
    static func connectDecided(_ rules: [Rule], _ kind: RuleKind, _ host: String, _ port: Int) -> String? {
        rules.first { rule in
            rule.enabled && rule.kind == kind && rule.match.methods == nil && rule.match.path == nil
                && (rule.match.schemes?.contains("https") ?? true) && (rule.match.port ?? port) == port
                && rule.match.hosts.patterns.contains { $0.matches(normalizedHost: host) }
        }?.name
    }

    static func dns(_ rules: [Rule], _ host: String, _ port: Int) -> String? {
        rules.first { rule in
            rule.enabled && rule.kind == .dns && (rule.match.port ?? port) == port
                && rule.match.hosts.patterns.contains { $0.matches(normalizedHost: host) }
        }?.name
    }
}
