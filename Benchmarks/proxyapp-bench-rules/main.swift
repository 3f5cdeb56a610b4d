// proxyapp-bench-rules RULES_FILE [ITERATIONS] [URL] [METHOD]
//
// Times the rule lookups one proxied request makes (the plan for the request, then the dns
// override for its host) against a rules file, without any I/O: nanoseconds per request, best
// of five runs. scripts/bench's rules phase prints it beside the throughput figures, so a
// regression in the lookup shows even when load-test noise hides it.
import Foundation
import ProxyCore
import Rules
import RulesFile

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: proxyapp-bench-rules RULES_FILE [ITERATIONS] [URL] [METHOD]\n".utf8))
    exit(2)
}
let iterations = arguments.count > 2 ? Int(arguments[2]) ?? 1_000_000 : 1_000_000
let url = arguments.count > 3 ? arguments[3] : "http://127.0.0.1:8080/1k"
let method = arguments.count > 4 ? arguments[4] : "GET"

let rules: RuleSet
do {
    rules = try RulesFile.load(path: arguments[1])
} catch {
    FileHandle.standardError.write(Data("\(error.description)\n".utf8))
    exit(1)
}
guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.host else {
    FileHandle.standardError.write(Data("not a URL: \(url)\n".utf8))
    exit(2)
}
let port = components.port ?? (scheme == "https" ? 443 : 80)
let pathAndQuery = (components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath)
    + (components.percentEncodedQuery.map { "?\($0)" } ?? "")

/// One request's lookups, as the engine makes them.
@inline(never)
func lookUp(_ rawHost: String) -> Int {
    let facts = RequestFacts(scheme: scheme, host: HostName.normalized(rawHost), port: port, method: method,
                             pathAndQuery: pathAndQuery)
    let plan = rules.plan(for: facts)
    let dns = rules.dnsOverride(host: facts.host, port: port)
    return (plan.isEmpty ? 0 : 1) + (dns == nil ? 0 : 2)
}

var best = Double.infinity
var outcome = 0
for _ in 0..<5 {
    let start = DispatchTime.now().uptimeNanoseconds
    for _ in 0..<iterations {
        outcome &+= lookUp(host)
    }
    let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start)
    best = min(best, elapsed / Double(iterations))
}
print("rules lookup ns/request \(String(format: "%.1f", best)) (\(rules.enabledCount) rules, \(method) \(url), matched \(outcome / (5 * iterations)))")
