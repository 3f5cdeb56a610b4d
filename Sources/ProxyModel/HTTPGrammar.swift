/// The HTTP grammar checks every part of the proxy that takes a method, header or status from a
/// person shares (RFC 9110): rules files, the request composer, replays and breakpoint edits.
///
/// It exists so that "is this a token" is decided in one place: a header name one front end
/// accepts and another refuses would be a gap an attacker could use.
public enum HTTPGrammar {
    /// RFC 9110 `token`: one or more `tchar`.
    public static func isToken(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
    }

    /// RFC 9110 `tchar`: letters, digits and ``!#$%&'*+-.^_`|~``.
    public static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// A field value (or a reason phrase) may hold tabs but no other control byte: a CR or LF
    /// would end the line on the wire and start another one (header injection).
    public static func isFieldValue(_ text: some StringProtocol) -> Bool {
        text.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
    }
}
