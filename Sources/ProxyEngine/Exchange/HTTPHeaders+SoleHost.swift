import NIOHTTP1
import ProxyCore
import ProxyModel

extension HTTPHeaders {
    /// The message's one `Host` value, or nil when it has none or several.
    ///
    /// Exactly what `self[canonicalForm: "host"]` yields when that list has one element (the
    /// fields' values split at commas, empty parts dropped, each trimmed of spaces and tabs),
    /// without building the list: this runs on every request.
    func soleHost() -> Substring? {
        var sole: Substring?
        var parts = 0
        for (name, value) in self where name.utf8.count == 4 && name.equalsIgnoringASCIICase("host") {
            if value.utf8.contains(UInt8(ascii: ",")) {  // rare: split only then
                for part in value.split(separator: ",") {
                    parts += 1
                    sole = part
                }
            } else if !value.isEmpty {
                parts += 1
                sole = Substring(value)
            }
            if parts > 1 { return nil }
        }
        return parts == 1 ? sole?.trimmingWhitespace() : nil
    }
}
