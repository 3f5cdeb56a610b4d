import ProxyCore

/// Finds the rules whose host patterns can match a host without testing every rule: exact
/// patterns by dictionary, `*.suffix` patterns by looking up each suffix of the host, and only
/// `*` and other globs by walking them. Two hundred rules for other hosts cost a few
/// dictionary lookups per request.
struct RuleIndex: Sendable {
    private var exact: [String: [Int]] = [:]
    private var subdomains: [Substring: [Int]] = [:]
    /// Positions of rules with a `*` or glob pattern: tested for every host.
    private var scanned: [Int] = []
    private(set) var isEmpty = true

    init(_ rules: [Rule]) {
        for (position, rule) in rules.enumerated() where rule.enabled {
            isEmpty = false
            var addedToScanned = false
            for pattern in rule.match.hosts.patterns {
                switch pattern.kind {
                case .exact(let host):
                    Self.append(position, to: &exact[host, default: []])
                case .subdomains(let suffix):
                    Self.append(position, to: &subdomains[suffix[...], default: []])
                case .any, .glob:
                    if !addedToScanned {
                        scanned.append(position)
                        addedToScanned = true
                    }
                }
            }
        }
    }

    private static func append(_ position: Int, to list: inout [Int]) {
        if list.last != position { list.append(position) }
    }

    /// Calls `body` with the position of every rule that may match `host` (normalized), in
    /// file order, each once, until `body` returns false.
    func forEachCandidate(host: String, _ body: (Int) -> Bool) {
        var lists: [[Int]] = []
        if let hits = exact[host] { lists.append(hits) }
        if !subdomains.isEmpty {
            var rest = host[...]
            while let dot = rest.utf8.firstIndex(of: UInt8(ascii: ".")) {
                rest = rest[rest.utf8.index(after: dot)...]
                if let hits = subdomains[rest] { lists.append(hits) }
            }
        }
        if lists.isEmpty {
            for position in scanned where !body(position) { return }
            return
        }
        lists.append(scanned)
        var merged = lists.flatMap { $0 }
        merged.sort()
        var previous = -1
        for position in merged where position != previous {
            previous = position
            if !body(position) { return }
        }
    }
}
