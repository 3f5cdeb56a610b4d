/// One header line as it crossed the wire.
///
/// Flows keep headers as an ordered list of these rather than a dictionary: order and duplicates
/// (two `Set-Cookie` lines, say) are part of what a user debugging traffic needs to see.
public struct HeaderField: Sendable, Hashable {
    public var name: String
    public var value: String

    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

extension Array where Element == HeaderField {
    /// The first value of the header called `name`, compared ignoring ASCII case (header names
    /// are ASCII tokens; Foundation's locale-aware comparison was a hot spot in exports).
    public func first(named name: String) -> String? {
        for field in self where field.name.equalsIgnoringASCIICase(name) {
            return field.value
        }
        return nil
    }
}
