import Foundation
import ProxyModel
import ProxyCore
import Rules
import Yams

/// The seven actions: block, map_local, map_remote, dns, rewrite, upstream_proxy, throttle.
extension RulesFileParser {
    mutating func action(_ kind: RuleKind, _ node: Node, checkFiles: Bool) -> RuleAction? {
        switch kind {
        case .block: return block(node).map(RuleAction.block)
        case .mapLocal: return mapLocal(node, checkFiles: checkFiles).map(RuleAction.mapLocal)
        case .mapRemote: return mapRemote(node).map(RuleAction.mapRemote)
        case .dns: return dns(node).map(RuleAction.dns)
        case .rewrite: return rewrite(node).map(RuleAction.rewrite)
        case .upstreamProxy: return upstreamProxy(node).map(RuleAction.upstreamProxy)
        case .throttle: return throttle(node).map(RuleAction.throttle)
        }
    }

    /// `throttle: 3g`, or `{ preset: 3g, down: 1mbit, up: 256kbit, latency: 100ms }` (figures
    /// replace the preset's); `throttle: off` exempts what matches from `--throttle`.
    private mutating func throttle(_ node: Node) -> ThrottleProfile? {
        let example = "e.g. throttle: 3g or throttle: { down: 1mbit, up: 256kbit, latency: 100ms }"
        if let name = node.scalar?.string, node.mapping == nil {
            if name.lowercased() == "off" { return ThrottleProfile() }  // exempt from --throttle
            guard let preset = ThrottleProfile.preset(named: name) else {
                nodes.fail(node, "throttle: '\(name.prefix(40))' is not a preset (\(ThrottleSpec.presetNames)), \(example)")
                return nil
            }
            return preset
        }
        guard let entries = nodes.mapping(node, "throttle", allowed: ["preset", "down", "up", "latency"]) else { return nil }
        var profile = ThrottleProfile()
        if let entry = entries.first(where: { $0.key == "preset" }) {
            guard let name = nodes.string(entry.value, "throttle preset") else { return nil }
            guard let preset = ThrottleProfile.preset(named: name) else {
                nodes.fail(entry.value, "throttle preset '\(name.prefix(40))' is not one of \(ThrottleSpec.presetNames)")
                return nil
            }
            profile = preset
        }
        for entry in entries where entry.key != "preset" {
            guard let text = entry.value.scalar?.string else {
                nodes.fail(entry.value, "throttle \(entry.key) must be a value, \(example)")
                return nil
            }
            do {
                try ThrottleSpec.apply(key: entry.key, value: text, to: &profile)
            } catch {
                nodes.fail(entry.value, "throttle \(error.reason)")
                return nil
            }
        }
        if entries.contains(where: { $0.key != "preset" }) { profile.preset = profile.preset.map { $0 + "*" } }
        guard !profile.isNone else {
            nodes.missing(node, "throttle needs a preset or figures, \(example)")
            return nil
        }
        return profile
    }

    private mutating func upstreamProxy(_ node: Node) -> UpstreamProxyAction? {
        guard let entries = nodes.mapping(node, "upstream_proxy", allowed: ["url", "direct"]) else { return nil }
        let example = "e.g. upstream_proxy: { url: http://proxy.corp:3128 } or upstream_proxy: { direct: true }"
        guard entries.count < 2 else {
            nodes.fail(node, "upstream_proxy takes either 'url:' or 'direct: true', not both")
            return nil
        }
        guard let entry = entries.first else {
            nodes.missing(node, "upstream_proxy needs 'url:' or 'direct: true', \(example)")
            return nil
        }
        if entry.key == "direct" {
            guard let direct = nodes.bool(entry.value, "upstream_proxy direct") else { return nil }
            guard direct else {
                nodes.fail(entry.value, "upstream_proxy direct: false means nothing: give 'url:' instead, \(example)")
                return nil
            }
            return .direct
        }
        guard let text = nodes.string(entry.value, "upstream_proxy url") else { return nil }
        switch UpstreamProxy.parse(text) {
        case .success(let proxy): return .proxy(proxy)
        case .failure(let error):
            nodes.fail(entry.value, "upstream_proxy url: \(error.reason)")
            return nil
        }
    }

    private mutating func block(_ node: Node) -> BlockAction? {
        if YAMLNodes.isNull(node) || node.bool == true { return BlockAction() }
        guard let entries = nodes.mapping(node, "block", allowed: ["status", "body", "headers"]) else { return nil }
        var action = BlockAction()
        var valid = true
        for entry in entries {
            switch entry.key {
            case "status":
                if let status = nodes.integer(entry.value, "block status", in: 200...599) { action.status = status } else { valid = false }
            case "body":
                if let body = nodes.string(entry.value, "block body") { action.body = body } else { valid = false }
            case "headers":
                if let headers = headerValues(entry.value, "block headers") { action.headers = headers } else { valid = false }
            default:
                break
            }
        }
        return valid ? action : nil
    }

    /// A status from 200 to 599 that may carry a body (not 204, 205 or 304).
    private mutating func bodyStatus(_ node: Node, _ what: String, why: String) -> Int? {
        guard let status = nodes.integer(node, what, in: 200...599) else { return nil }
        if [204, 205, 304].contains(status) {
            nodes.fail(node, "\(what) \(status) cannot carry a body, and \(why): use another status")
            return nil
        }
        return status
    }

    private mutating func mapLocal(_ node: Node, checkFiles: Bool) -> MapLocalAction? {
        guard let entries = nodes.mapping(
            node, "map_local", allowed: ["file", "dir", "status", "content_type", "headers"]) else { return nil }
        var source: MapLocalAction.Source?
        var action = MapLocalAction(source: .file(""))
        var valid = true
        for entry in entries {
            switch entry.key {
            case "file", "dir":
                guard source == nil else {
                    nodes.fail(entry.keyNode, "give either file or dir, not both")
                    valid = false
                    continue
                }
                guard let text = nodes.string(entry.value, entry.key) else { valid = false; continue }
                guard !text.isEmpty else {
                    nodes.fail(entry.value, "map_local \(entry.key) must be a path, not empty text")
                    valid = false
                    continue
                }
                let path = resolvedPath(text)
                if checkFiles, let problem = Self.problem(with: path, directory: entry.key == "dir") {
                    nodes.fail(entry.value, "map_local \(entry.key) '\(path)' \(problem)")
                    valid = false
                    continue
                }
                source = entry.key == "dir" ? .directory(path) : .file(path)
            case "status":
                if let status = bodyStatus(entry.value, "map_local status", why: "it answers with the file") {
                    action.status = status
                } else {
                    valid = false
                }
            case "content_type":
                if let type = nodes.singleLine(entry.value, "content_type") { action.contentType = type } else { valid = false }
            case "headers":
                if let headers = headerValues(entry.value, "map_local headers") { action.headers = headers } else { valid = false }
            default:
                break
            }
        }
        guard valid else { return nil }
        guard let source else {
            nodes.missing(node, "map_local needs a file (file: path/to/file.json) or a directory (dir: path/to/folder)")
            return nil
        }
        action.source = source
        return action
    }

    /// `~` and paths relative to the rules file's folder, made absolute.
    private func resolvedPath(_ text: String) -> String {
        var path = text
        path = HomeDirectory.expandingTilde(path)
        if !path.hasPrefix("/") {
            path = URL(fileURLWithPath: baseDirectory).appendingPathComponent(path).path
        }
        return URL(fileURLWithPath: path).standardizedFileURL.path
    }

    private static func problem(with path: String, directory: Bool) -> String? {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            return "does not exist: create it or fix the path (relative paths start at the rules file's folder)"
        }
        if directory && !isDirectory.boolValue { return "is a file: use file: instead of dir:" }
        if !directory && isDirectory.boolValue { return "is a directory: use dir: instead of file:" }
        if !FileManager.default.isReadableFile(atPath: path) { return "cannot be read: check its permissions" }
        return nil
    }

    private mutating func mapRemote(_ node: Node) -> MapRemoteAction? {
        guard let entries = nodes.mapping(node, "map_remote", allowed: ["to", "preserve_host"]) else { return nil }
        var destination: RemoteDestination?
        var preserveHost = false
        var valid = true
        for entry in entries {
            switch entry.key {
            case "to":
                guard let text = nodes.singleLine(entry.value, "map_remote to") else { valid = false; continue }
                do {
                    destination = try RemoteDestination(parsing: text)
                } catch {
                    nodes.fail(entry.value, "map_remote to \(error.message)")
                    valid = false
                }
            case "preserve_host":
                if let flag = nodes.bool(entry.value, "preserve_host") { preserveHost = flag } else { valid = false }
            default:
                break
            }
        }
        guard valid else { return nil }
        guard let destination else {
            nodes.missing(node, "map_remote needs 'to:' with the new URL, e.g. to: http://127.0.0.1:3000")
            return nil
        }
        return MapRemoteAction(destination: destination, preserveHost: preserveHost)
    }

    private mutating func dns(_ node: Node) -> DNSOverride? {
        guard let entries = nodes.mapping(node, "dns", allowed: ["to"]) else { return nil }
        guard let entry = entries.first else {
            nodes.missing(node, "dns needs 'to:' with the IP address(es) to connect to, e.g. to: 127.0.0.1")
            return nil
        }
        guard let items = nodes.oneOrMany(entry.value, "dns to", limit: 16) else { return nil }
        var addresses: [String] = []
        for item in items {
            guard let text = nodes.string(item, "dns to") else { return nil }
            if text.contains("%") {
                nodes.fail(item, "dns to '\(text)': a scoped IPv6 address (with %zone) cannot be connected to here: use a global address")
                return nil
            }
            let normalized = HostName.normalized(text)
            guard HostName.isIPAddress(normalized) else {
                nodes.fail(item, "dns to '\(text)' is not an IP address: write IPv4 (127.0.0.1) or IPv6 (::1) addresses")
                return nil
            }
            addresses.append(normalized)
        }
        return DNSOverride(addresses: addresses)
    }

    private mutating func rewrite(_ node: Node) -> RewriteAction? {
        guard let entries = nodes.mapping(
            node, "rewrite",
            allowed: ["request_headers", "response_headers", "status", "request_body", "response_body"]) else { return nil }
        var action = RewriteAction()
        var valid = true
        for entry in entries {
            switch entry.key {
            case "request_headers":
                if let edits = headerEdits(entry.value, "request_headers") { action.requestHeaders = edits } else { valid = false }
            case "response_headers":
                if let edits = headerEdits(entry.value, "response_headers") { action.responseHeaders = edits } else { valid = false }
            case "status":
                if let status = bodyStatus(entry.value, "rewrite status", why: "the origin's body is still sent") {
                    action.status = status
                } else {
                    valid = false
                }
            case "request_body":
                if let list = replacements(entry.value, "request_body") { action.requestBody = list } else { valid = false }
            case "response_body":
                if let list = replacements(entry.value, "response_body") { action.responseBody = list } else { valid = false }
            default:
                break
            }
        }
        guard valid else { return nil }
        if entries.isEmpty {
            nodes.missing(node, "rewrite does nothing: add request_headers, response_headers, status, request_body or response_body")
            return nil
        }
        return action
    }
}
