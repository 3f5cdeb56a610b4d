/// Rebuilds an `application/x-www-form-urlencoded` body from HAR `postData.params`, for writers
/// that list the parameters without the `text` (the HTML form serialisation: unreserved bytes
/// as they are, space as `+`, everything else `%XX`).
enum HARFormEncoding {
    static func encode(_ params: [(name: String, value: String)]) -> String {
        params.map { "\(escape($0.name))=\(escape($0.value))" }.joined(separator: "&")
    }

    private static func escape(_ text: String) -> String {
        var output = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                 UInt8(ascii: "_"), UInt8(ascii: "*"):
                output.unicodeScalars.append(Unicode.Scalar(byte))
            case UInt8(ascii: " "):
                output += "+"
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                output += "%"
                output.unicodeScalars.append(hex[Int(byte >> 4)])
                output.unicodeScalars.append(hex[Int(byte & 0x0F)])
            }
        }
        return output
    }
}
