import NIOHTTP1
import Rules

extension HeaderEdits {
    /// Applies a rewrite rule's header edits: remove, then set (every earlier value of the name
    /// replaced), then add. Headers the edits do not name keep their order and case.
    func apply(to headers: inout HTTPHeaders) {
        for name in remove {
            headers.remove(name: name)
        }
        var replaced = Set<String>()
        for (name, value) in set {
            if replaced.insert(name.lowercased()).inserted {
                headers.remove(name: name)
            }
            headers.add(name: name, value: value)
        }
        for (name, value) in add {
            headers.add(name: name, value: value)
        }
    }
}
