/// `scheme://authority` of an absolute URL (`https://api.example.com:8443` of
/// `https://api.example.com:8443/v1?x=1`): what a breakpoint's edit may not change and what a
/// request line with only a path goes to. The text without `://` is returned as it is.
public enum URLOrigin {
    public static func of(_ url: String) -> String {
        guard let separator = url.range(of: "://") else { return url }
        let rest = url[separator.upperBound...]
        return String(url[..<(rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex)])
    }
}
