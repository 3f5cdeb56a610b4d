/// Standard base64 (RFC 4648, with padding) appended straight into an output buffer.
///
/// The HAR writer encodes binary bodies of up to the capture cap (16 MiB by default) in pieces
/// into its JSON buffer; `Data.base64EncodedString` would build the whole string first.
enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

    static func append(_ input: ArraySlice<UInt8>, to output: inout [UInt8]) {
        output.reserveCapacity(output.count + (input.count + 2) / 3 * 4)
        var index = input.startIndex
        let end = input.endIndex
        while end - index >= 3 {
            let value = UInt32(input[index]) << 16 | UInt32(input[index + 1]) << 8 | UInt32(input[index + 2])
            output.append(alphabet[Int(value >> 18 & 0x3F)])
            output.append(alphabet[Int(value >> 12 & 0x3F)])
            output.append(alphabet[Int(value >> 6 & 0x3F)])
            output.append(alphabet[Int(value & 0x3F)])
            index += 3
        }
        let rest = end - index
        guard rest > 0 else { return }
        let value = UInt32(input[index]) << 16 | (rest == 2 ? UInt32(input[index + 1]) << 8 : 0)
        output.append(alphabet[Int(value >> 18 & 0x3F)])
        output.append(alphabet[Int(value >> 12 & 0x3F)])
        output.append(rest == 2 ? alphabet[Int(value >> 6 & 0x3F)] : UInt8(ascii: "="))
        output.append(UInt8(ascii: "="))
    }
}
