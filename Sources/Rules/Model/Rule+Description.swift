/// How `proxyapp rules list` and `rules check` show a rule: what it matches and what it does,
/// one line each, in the file's own words.
extension Rule {
    public var matchDescription: String {
        var parts = ["host " + match.hosts.patterns.map(\.text).joined(separator: " | ")]
        if let port = match.port { parts.append("port \(port)") }
        if let schemes = match.schemes { parts.append("scheme " + schemes.sorted().joined(separator: " | ")) }
        if let methods = match.methods { parts.append("method " + methods.sorted().joined(separator: " | ")) }
        if let path = match.path { parts.append(path.description) }
        return parts.joined(separator: ", ")
    }

    public var actionDescription: String {
        switch action {
        case .block(let block):
            return "block with \(block.status)" + (block.body == nil ? "" : " and a body of its own")
        case .mapLocal(let local):
            let source: String
            switch local.source {
            case .file(let path): source = "file \(path)"
            case .directory(let path): source = "directory \(path)"
            }
            return "map_local from \(source) (\(local.status)" + (local.contentType.map { ", \($0)" } ?? "") + ")"
        case .mapRemote(let remote):
            return "map_remote to \(remote.destination.url)" + (remote.preserveHost ? " (Host kept)" : "")
        case .dns(let dns):
            return "dns to " + dns.addresses.joined(separator: ", ")
        case .upstreamProxy(let route):
            return route.proxy.map { "upstream_proxy through \($0)" } ?? "upstream_proxy direct"
        case .throttle(let profile):
            return profile.isNone ? "throttle off" : "throttle \(profile)"
        case .rewrite(let rewrite):
            var parts: [String] = []
            if let edits = Self.describe(rewrite.requestHeaders) { parts.append("request headers (\(edits))") }
            if let edits = Self.describe(rewrite.responseHeaders) { parts.append("response headers (\(edits))") }
            if let status = rewrite.status { parts.append("status \(status)") }
            if !rewrite.requestBody.isEmpty { parts.append("request body (\(Self.count(rewrite.requestBody.count)))") }
            if !rewrite.responseBody.isEmpty { parts.append("response body (\(Self.count(rewrite.responseBody.count)))") }
            return "rewrite " + parts.joined(separator: ", ")
        }
    }

    private static func describe(_ edits: HeaderEdits) -> String? {
        if edits.isEmpty { return nil }
        var parts: [String] = []
        if !edits.set.isEmpty { parts.append("set " + edits.set.map(\.name).joined(separator: ", ")) }
        if !edits.add.isEmpty { parts.append("add " + edits.add.map(\.name).joined(separator: ", ")) }
        if !edits.remove.isEmpty { parts.append("remove " + edits.remove.joined(separator: ", ")) }
        return parts.joined(separator: "; ")
    }

    private static func count(_ replacements: Int) -> String {
        replacements == 1 ? "1 replacement" : "\(replacements) replacements"
    }
}

extension SSLProxyingLists {
    /// `decrypt: every host; never: *.apple.com` as `rules list` shows it.
    public var description: String {
        let include = include.map { $0.patterns.map(\.text).joined(separator: ", ") } ?? "every host"
        let exclude = exclude.patterns.isEmpty ? "" : "; never: " + exclude.patterns.map(\.text).joined(separator: ", ")
        return "decrypt: \(include)\(exclude)"
    }
}
