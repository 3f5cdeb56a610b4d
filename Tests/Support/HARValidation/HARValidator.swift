import Foundation

/// Checks a HAR document against the HAR 1.2 rules our export promises (issue 4): required
/// fields and their JSON types, dates with milliseconds and a zone, the -1 conventions, `time`
/// equal to the sum of its phases, page references, `_` on custom fields, base64 content, and our
/// `_rules` (a non-empty array of rule names).
///
/// It parses with `JSONSerialization`, independent of the writer, and returns every problem
/// found as a line naming its JSON path (empty: valid).
public struct HARValidator {
    private(set) var problems: [String] = []
    private var pageIDs: Set<String> = []

    /// Parses and checks `data`; the problems, empty when the document is valid.
    public static func problems(in data: Data) -> [String] {
        let root: Any
        do {
            root = try JSONSerialization.jsonObject(with: data)
        } catch {
            return ["not JSON: \(error)"]
        }
        var validator = HARValidator()
        validator.checkRoot(root)
        return validator.problems
    }

    private mutating func problem(_ path: String, _ text: String) {
        problems.append("\(path): \(text)")
    }

    private mutating func checkRoot(_ root: Any) {
        guard let root = object(root, "$") else { return }
        allowKeys(root, ["log"], "$")
        guard let log = object(root["log"], "$.log") else { return }
        allowKeys(log, ["version", "creator", "browser", "pages", "entries", "comment"], "$.log")
        if log["version"] as? String != "1.2" { problem("$.log.version", "must be the string \"1.2\"") }
        if let creator = object(log["creator"], "$.log.creator") {
            allowKeys(creator, ["name", "version", "comment"], "$.log.creator")
            string(creator["name"], "$.log.creator.name")
            string(creator["version"], "$.log.creator.version")
        }
        if let pages = array(log["pages"], "$.log.pages") {
            if pages.isEmpty { problem("$.log.pages", "needs at least one page (Safari's importer)") }
            for (index, page) in pages.enumerated() { checkPage(page, "$.log.pages[\(index)]") }
        }
        if let entries = array(log["entries"], "$.log.entries") {
            for (index, entry) in entries.enumerated() { checkEntry(entry, "$.log.entries[\(index)]") }
        }
    }

    private mutating func checkPage(_ value: Any, _ path: String) {
        guard let page = object(value, path) else { return }
        allowKeys(page, ["startedDateTime", "id", "title", "pageTimings", "comment"], path)
        date(page["startedDateTime"], "\(path).startedDateTime")
        if let id = string(page["id"], "\(path).id") { pageIDs.insert(id) }
        string(page["title"], "\(path).title")
        if let timings = object(page["pageTimings"], "\(path).pageTimings") {
            allowKeys(timings, ["onContentLoad", "onLoad", "comment"], "\(path).pageTimings")
            for key in ["onContentLoad", "onLoad"] where timings[key] != nil {
                phase(timings[key], "\(path).pageTimings.\(key)")
            }
        }
    }

    private mutating func checkEntry(_ value: Any, _ path: String) {
        guard let entry = object(value, path) else { return }
        allowKeys(entry, ["pageref", "startedDateTime", "time", "request", "response", "cache", "timings",
                          "serverIPAddress", "connection", "comment"], path)
        if entry["pageref"] != nil, let ref = string(entry["pageref"], "\(path).pageref"), !pageIDs.contains(ref) {
            problem("\(path).pageref", "'\(ref)' names no page")
        }
        date(entry["startedDateTime"], "\(path).startedDateTime")
        let time = number(entry["time"], "\(path).time")
        if let time, time < 0 { problem("\(path).time", "must not be negative") }
        checkRequest(entry["request"], "\(path).request")
        checkResponse(entry["response"], "\(path).response")
        if let cache = object(entry["cache"], "\(path).cache") {
            allowKeys(cache, ["beforeRequest", "afterRequest", "comment"], "\(path).cache")
        }
        if let timings = object(entry["timings"], "\(path).timings") {
            checkTimings(timings, time: time, "\(path).timings")
        }
        for key in ["serverIPAddress", "connection", "comment"] where entry[key] != nil {
            string(entry[key], "\(path).\(key)")
        }
        if entry["_rules"] != nil, let rules = array(entry["_rules"], "\(path)._rules") {
            if rules.isEmpty { problem("\(path)._rules", "is written only when a rule acted (left out otherwise)") }
            for (index, name) in rules.enumerated() { string(name, "\(path)._rules[\(index)]") }
        }
    }

    private mutating func checkTimings(_ timings: [String: Any], time: Double?, _ path: String) {
        allowKeys(timings, ["blocked", "dns", "connect", "send", "wait", "receive", "ssl", "comment"], path)
        var sum = 0.0
        for key in ["send", "wait", "receive"] {
            if let value = number(timings[key], "\(path).\(key)") {
                if value < 0 { problem("\(path).\(key)", "is required to be non-negative") }
                sum += max(value, 0)
            }
        }
        for key in ["blocked", "dns", "connect", "ssl"] where timings[key] != nil {
            if let value = phase(timings[key], "\(path).\(key)"), key != "ssl" { sum += max(value, 0) }
        }
        if let ssl = (timings["ssl"] as? NSNumber)?.doubleValue, ssl >= 0,
           let connect = (timings["connect"] as? NSNumber)?.doubleValue, connect < ssl {
            problem("\(path).connect", "must include ssl (\(connect) < \(ssl))")
        }
        if let time, abs(time - sum) > 1e-6 {
            problem("\(path)", "time \(time) is not the sum of the phases \(sum)")
        }
    }

    private mutating func checkRequest(_ value: Any?, _ path: String) {
        guard let request = object(value, path) else { return }
        allowKeys(request, ["method", "url", "httpVersion", "cookies", "headers", "queryString", "postData",
                            "headersSize", "bodySize", "comment"], path)
        string(request["method"], "\(path).method")
        if let url = string(request["url"], "\(path).url"), URLComponents(string: url)?.scheme == nil {
            problem("\(path).url", "'\(url)' is not an absolute URL")
        }
        string(request["httpVersion"], "\(path).httpVersion")
        nameValues(request["headers"], "\(path).headers")
        nameValues(request["queryString"], "\(path).queryString")
        cookies(request["cookies"], "\(path).cookies")
        if request["postData"] != nil, let postData = object(request["postData"], "\(path).postData") {
            allowKeys(postData, ["mimeType", "params", "text", "comment"], "\(path).postData")
            string(postData["mimeType"], "\(path).postData.mimeType")
            if postData["text"] != nil { string(postData["text"], "\(path).postData.text") }
            if postData["params"] != nil, let params = array(postData["params"], "\(path).postData.params") {
                for (index, param) in params.enumerated() {
                    guard let param = object(param, "\(path).postData.params[\(index)]") else { continue }
                    string(param["name"], "\(path).postData.params[\(index)].name")
                }
            }
            if let encoding = postData["_encoding"] {
                base64(encoding, text: postData["text"], "\(path).postData")
            }
        }
        size(request["headersSize"], "\(path).headersSize")
        size(request["bodySize"], "\(path).bodySize")
    }

    private mutating func checkResponse(_ value: Any?, _ path: String) {
        guard let response = object(value, path) else { return }
        allowKeys(response, ["status", "statusText", "httpVersion", "cookies", "headers", "content", "redirectURL",
                             "headersSize", "bodySize", "comment"], path)
        if let status = integer(response["status"], "\(path).status"), status < 0 || status > 999 {
            problem("\(path).status", "\(status) is no HTTP status (0 when there was none)")
        }
        string(response["statusText"], "\(path).statusText")
        string(response["httpVersion"], "\(path).httpVersion")
        nameValues(response["headers"], "\(path).headers")
        cookies(response["cookies"], "\(path).cookies")
        if let content = object(response["content"], "\(path).content") {
            allowKeys(content, ["size", "compression", "mimeType", "text", "encoding", "comment"], "\(path).content")
            if let size = integer(content["size"], "\(path).content.size"), size < 0 {
                problem("\(path).content.size", "must not be negative")
            }
            if content["compression"] != nil { integer(content["compression"], "\(path).content.compression") }
            string(content["mimeType"], "\(path).content.mimeType")
            if content["text"] != nil { string(content["text"], "\(path).content.text") }
            if let encoding = content["encoding"] { base64(encoding, text: content["text"], "\(path).content") }
        }
        string(response["redirectURL"], "\(path).redirectURL")
        size(response["headersSize"], "\(path).headersSize")
        size(response["bodySize"], "\(path).bodySize")
    }

    private mutating func base64(_ encoding: Any, text: Any?, _ path: String) {
        guard encoding as? String == "base64" else {
            problem("\(path).encoding", "only \"base64\" is allowed, got \(encoding)")
            return
        }
        if let text = text as? String, Data(base64Encoded: text) == nil {
            problem("\(path).text", "is not valid base64")
        }
    }

    private mutating func nameValues(_ value: Any?, _ path: String) {
        guard let items = array(value, path) else { return }
        for (index, item) in items.enumerated() {
            guard let item = object(item, "\(path)[\(index)]") else { continue }
            allowKeys(item, ["name", "value", "comment"], "\(path)[\(index)]")
            string(item["name"], "\(path)[\(index)].name")
            string(item["value"], "\(path)[\(index)].value")
        }
    }

    private mutating func cookies(_ value: Any?, _ path: String) {
        guard let items = array(value, path) else { return }
        for (index, item) in items.enumerated() {
            let itemPath = "\(path)[\(index)]"
            guard let cookie = object(item, itemPath) else { continue }
            allowKeys(cookie, ["name", "value", "path", "domain", "expires", "httpOnly", "secure", "comment"], itemPath)
            string(cookie["name"], "\(itemPath).name")
            string(cookie["value"], "\(itemPath).value")
            for key in ["path", "domain"] where cookie[key] != nil { string(cookie[key], "\(itemPath).\(key)") }
            if cookie["expires"] != nil { date(cookie["expires"], "\(itemPath).expires") }
            for key in ["httpOnly", "secure"] where cookie[key] != nil && !Self.isBool(cookie[key]!) {
                problem("\(itemPath).\(key)", "must be a boolean")
            }
        }
    }

    // MARK: Types

    /// Keys outside HAR 1.2's list for this object must start with `_`.
    private mutating func allowKeys(_ object: [String: Any], _ allowed: Set<String>, _ path: String) {
        for key in object.keys.sorted() where !allowed.contains(key) && !key.hasPrefix("_") {
            problem("\(path).\(key)", "custom fields must start with '_'")
        }
    }

    private mutating func object(_ value: Any?, _ path: String) -> [String: Any]? {
        guard let object = value as? [String: Any] else { problem(path, "must be an object"); return nil }
        return object
    }

    private mutating func array(_ value: Any?, _ path: String) -> [Any]? {
        guard let array = value as? [Any] else { problem(path, "must be an array"); return nil }
        return array
    }

    @discardableResult
    private mutating func string(_ value: Any?, _ path: String) -> String? {
        guard let string = value as? String else { problem(path, "must be a string"); return nil }
        return string
    }

    private static func isBool(_ value: Any) -> Bool {
        String(describing: type(of: value)).contains("Boolean") || type(of: value) == Bool.self
    }

    @discardableResult
    private mutating func number(_ value: Any?, _ path: String) -> Double? {
        guard let value, let number = value as? NSNumber, !Self.isBool(value) else {
            problem(path, "must be a number")
            return nil
        }
        guard number.doubleValue.isFinite else { problem(path, "must be finite"); return nil }
        return number.doubleValue
    }

    @discardableResult
    private mutating func integer(_ value: Any?, _ path: String) -> Int? {
        guard let number = number(value, path) else { return nil }
        guard number == number.rounded() else { problem(path, "must be a whole number"); return nil }
        return Int(number)
    }

    /// -1 (not applicable) or a non-negative number.
    @discardableResult
    private mutating func phase(_ value: Any?, _ path: String) -> Double? {
        guard let number = number(value, path) else { return nil }
        if number < 0 && number != -1 { problem(path, "must be -1 or non-negative, got \(number)") }
        return number
    }

    /// -1 (unknown) or a non-negative whole number.
    private mutating func size(_ value: Any?, _ path: String) {
        guard let size = integer(value, path) else { return }
        if size < -1 { problem(path, "must be -1 or non-negative, got \(size)") }
    }

    private static let datePattern = try! NSRegularExpression(
        pattern: #"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}(Z|[+-]\d{2}:\d{2})$"#)

    private mutating func date(_ value: Any?, _ path: String) {
        guard let text = string(value, path) else { return }
        let range = NSRange(text.startIndex..., in: text)
        if Self.datePattern.firstMatch(in: text, range: range) == nil {
            problem(path, "'\(text)' is not ISO 8601 with milliseconds and a zone")
        }
    }
}
