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
        var walk = candidates(host: host)
        while let (position, _) = walk.next() {
            if !body(position) { return }
        }
    }

    /// The rules that may match `host` (normalized), in file order, each once, with whether
    /// each was found by this very host (an exact or `*.suffix` pattern that matches it: its
    /// host needs no second check). A value to iterate, so the caller's loop body is inlined.
    func candidates(host: String) -> Candidates {
        var hits = exact[host]
        var moreHits: [[Int]] = []
        // A name never ends in a digit (no top-level domain is numeric): an IPv4 address has
        // no `*.suffix` to look up.
        if !subdomains.isEmpty, let last = host.utf8.last, !(UInt8(ascii: "0")...UInt8(ascii: "9")).contains(last) {
            var rest = host.utf8[...]
            while let dot = rest.firstIndex(of: UInt8(ascii: ".")) {
                rest = rest[rest.index(after: dot)...]
                if let found = subdomains[Substring(rest)] {
                    if hits == nil { hits = found } else { moreHits.append(found) }
                }
            }
        }
        if var merged = hits, !moreHits.isEmpty {
            // Rare: the host hit several lists. Each list is in order; one sort unites them.
            merged += moreHits.joined()
            merged.sort()
            hits = merged
        }
        return Candidates(hits: hits ?? [], scanned: scanned)
    }

    /// The host's hits and the scanned rules as one ascending walk, each position once (both
    /// may hold it; it counts as a hit then).
    struct Candidates: IteratorProtocol {
        let hits: [Int]
        let scanned: [Int]
        private var i = 0
        private var j = 0

        init(hits: [Int], scanned: [Int]) {
            self.hits = hits
            self.scanned = scanned
        }

        mutating func next() -> (position: Int, hostKnown: Bool)? {
            if i < hits.count && (j == scanned.count || hits[i] <= scanned[j]) {
                let position = hits[i]
                i += 1
                while i < hits.count && hits[i] == position { i += 1 }
                if j < scanned.count && scanned[j] == position { j += 1 }
                return (position, true)
            }
            guard j < scanned.count else { return nil }
            defer { j += 1 }
            return (scanned[j], false)
        }
    }
}
