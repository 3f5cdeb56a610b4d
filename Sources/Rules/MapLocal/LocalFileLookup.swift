import ProxyModel

/// Which file a `map_local` rule answers a request with.
///
/// A `file:` rule always answers with its file. A `dir:` rule appends the request's path,
/// percent-decoded, to the directory: for a rule whose path is `literal*` (`/static/*`), only
/// what the `*` matched; otherwise the whole path. A path ending in `/` gets `index.html`.
/// `..` segments, NUL bytes and backslashes are refused, so no request reaches a file outside
/// the directory.
public enum LocalFileLookup {
    public enum Result: Sendable, Equatable {
        case file(String)
        /// The request's path cannot name a file under the directory; the reason, for a 404.
        case refused(String)
    }

    public static func file(for action: MapLocalAction, request: RequestFacts, condition: PathCondition?) -> Result {
        switch action.source {
        case .file(let path):
            return .file(path)
        case .directory(let directory):
            var relative = request.path
            if case .glob(let glob)? = condition, let remainder = glob.remainder(of: relative) {
                relative = remainder
            }
            guard let decoded = PercentDecoding.pathDecoded(relative) else {
                return .refused("the path has invalid percent-encoding")
            }
            // Split and compare bytes, never Characters: a combining mark after a `/` would
            // otherwise glue it to the `..` before it and hide that `..`.
            var components: [String] = []
            for component in decoded.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: true) {
                if component.elementsEqual(".".utf8) { continue }
                if component.elementsEqual("..".utf8) || component.contains(UInt8(ascii: "\\")) || component.contains(0) {
                    return .refused("the path leaves the map_local directory")
                }
                components.append(String(decoding: component, as: UTF8.self))
            }
            if decoded.isEmpty || decoded.utf8.last == UInt8(ascii: "/") {
                components.append("index.html")
            }
            let base = directory.hasSuffix("/") ? String(directory.dropLast()) : directory
            return .file(([base] + components).joined(separator: "/"))
        }
    }
}
