/// Case-insensitive comparison of header names and other ASCII tokens without allocating.
///
/// Header filtering runs for every header of every message; `lowercased()` and hashing there
/// showed up in profiles, a byte loop does not.
extension String {
    /// True when both strings are equal ignoring ASCII case (`Content-Length` = `content-length`).
    @inlinable
    public func equalsIgnoringASCIICase(_ other: String) -> Bool {
        let lhs = self.utf8
        let rhs = other.utf8
        guard lhs.count == rhs.count else { return false }
        var left = lhs.startIndex
        var right = rhs.startIndex
        while left != lhs.endIndex {
            let a = lhs[left]
            let b = rhs[right]
            if a != b {
                let folded = a | 0x20
                guard folded == b | 0x20, folded >= UInt8(ascii: "a"), folded <= UInt8(ascii: "z") else {
                    return false
                }
            }
            lhs.formIndex(after: &left)
            rhs.formIndex(after: &right)
        }
        return true
    }

    /// The string lowercased, without a copy when it has no ASCII uppercase letters.
    @inlinable
    public var asciiLowercased: String {
        if utf8.contains(where: { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") }) {
            return lowercased()
        }
        return self
    }
}
