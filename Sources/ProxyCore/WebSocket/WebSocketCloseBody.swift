/// Reads a close frame's body (RFC 6455 §5.5.1): an optional two-byte status code, then a UTF-8
/// reason. The capture shows both; a body the rules forbid is noted on the message, not fatal.
enum WebSocketCloseBody {
    /// Sets `closeCode`, `closeReason` and, for a bad body, `issue` on `message` from the whole body.
    static func parse(_ body: [UInt8], into message: inout WebSocketMessage) {
        guard !body.isEmpty else { return }
        guard body.count >= 2 else {
            message.issue = .closeBodyTooShort
            return
        }
        let code = UInt16(body[0]) << 8 | UInt16(body[1])
        message.closeCode = code
        let reason = body[2...]
        var utf8 = UTF8StreamValidator()
        utf8.validate(reason)
        message.closeReason = String(decoding: reason, as: UTF8.self)
        if !isSendable(code) {
            message.issue = .invalidCloseCode(code)
        } else if !utf8.isComplete {
            message.issue = .invalidUTF8
        }
    }

    /// Codes an endpoint may put in a close frame: the defined ones except 1004–1006 and 1015
    /// (reserved or meant for local use), IANA's 1012–1014, and 3000–4999 (libraries, applications).
    static func isSendable(_ code: UInt16) -> Bool {
        switch code {
        case 1000...1003, 1007...1014, 3000...4999: return true
        default: return false
        }
    }
}
