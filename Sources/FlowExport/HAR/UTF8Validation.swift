/// Checks bytes for well-formed UTF-8 without building a `String`.
///
/// Export asks this of every body it considers textual, so it must be cheap on ASCII (the common
/// case) and never copy.
enum UTF8Validation {
    static func isValid(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        validPrefixLength(bytes) == bytes.count
    }

    static func isValid(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { isValid($0) }
    }

    /// How many leading bytes form complete, valid UTF-8. A body cut off by the capture cap can
    /// end inside a character; callers compare this with the count to tell that from garbage.
    static func validPrefixLength(_ bytes: UnsafeBufferPointer<UInt8>) -> Int {
        var index = 0
        let count = bytes.count
        while index < count {
            let lead = bytes[index]
            if lead < 0x80 {
                index += 1
                continue
            }
            let length: Int
            var minimumSecond: UInt8 = 0x80
            var maximumSecond: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; minimumSecond = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; maximumSecond = 0x9F  // no UTF-16 surrogates
            case 0xF0: length = 4; minimumSecond = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; maximumSecond = 0x8F
            default: return index
            }
            guard index + length <= count else { return index }
            let second = bytes[index + 1]
            guard second >= minimumSecond && second <= maximumSecond else { return index }
            for offset in 2..<max(length, 2) where bytes[index + offset] & 0xC0 != 0x80 {
                return index
            }
            index += length
        }
        return count
    }
}
