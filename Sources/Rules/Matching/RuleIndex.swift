import ProxyCore

/// Finds the rules whose host patterns can match a host without testing every rule: exact
/// patterns by dictionary, `*.suffix` patterns by looking up each suffix of the host, and only
/// `*` and other globs by walking them. Two hundred rules for other hosts cost a few
/// dictionary lookups per request, and the walk allocates nothing unless a host hits more than
/// one list (an exact name and a suffix, say).
struct RuleIndex: Sendable {
    private var exact: [String: [Int]] = [:]
    private var subdomains: [Substring: [Int]] = [:]
    /// Positions of rules with a `*` or glob pattern: tested for every host.
    private var scanned: [Int] = []
    private(set) var isEmpty = true

    /// Indexes the enabled rules of `rules` that `include` accepts; positions are in `rules`.
    init(_ rules: [Rule], including include: (Rule) -> Bool = { _ in true }) {
        for (position, rule) in rules.enumerated() where rule.enabled && include(rule) {
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
        var hits = exact[host]
        var moreHits: [[Int]] = []
        if !subdomains.isEmpty {
            var rest = host[...]
            while let dot = rest.utf8.firstIndex(of: UInt8(ascii: ".")) {
                rest = rest[rest.utf8.index(after: dot)...]
                if let found = subdomains[rest] {
                    if hits == nil { hits = found } else { moreHits.append(found) }
                }
            }
        }
        guard var hits else {
            for position in scanned where !body(position) { return }
            return
        }
        if !moreHits.isEmpty {
            // Rare: the host hit several lists. Each list is in order; one sort unites them.
            hits += moreHits.joined()
            hits.sort()
        }
        Self.merge(hits, scanned, body)
    }

    /// Visits two ascending lists as one, each position once (both may hold it).
    private static func merge(_ first: [Int], _ second: [Int], _ body: (Int) -> Bool) {
        var i = 0, j = 0
        var previous = -1
        while i < first.count || j < second.count {
            let next: Int
            if j == second.count || (i < first.count && first[i] <= second[j]) {
                next = first[i]
                i += 1
            } else {
                next = second[j]
                j += 1
            }
            if next == previous { continue }
            previous = next
            if !body(next) { return }
        }
    }
}
