/// The permessage-deflate parameters a server accepted (RFC 7692 §7.1), read from its `101`
/// response's `Sec-WebSocket-Extensions`.
///
/// Why: whether a message with RSV1 can be inflated, and whether each peer keeps its LZ77 window
/// from one message to the next, is decided in the handshake; the relay's observers need it to
/// build one inflater per direction (`contextTakeover(for:)`, `windowBits(for:)`).
public struct WebSocketDeflateParameters: Sendable, Equatable {
    /// The server starts every message with an empty window.
    public var serverNoContextTakeover = false
    /// The client starts every message with an empty window.
    public var clientNoContextTakeover = false
    /// The server's LZ77 window, 8–15 bits (15 when not negotiated).
    public var serverMaxWindowBits = 15
    /// The client's LZ77 window, 8–15 bits (15 when not negotiated).
    public var clientMaxWindowBits = 15

    public init(serverNoContextTakeover: Bool = false, clientNoContextTakeover: Bool = false,
                serverMaxWindowBits: Int = 15, clientMaxWindowBits: Int = 15) {
        self.serverNoContextTakeover = serverNoContextTakeover
        self.clientNoContextTakeover = clientNoContextTakeover
        self.serverMaxWindowBits = serverMaxWindowBits
        self.clientMaxWindowBits = clientMaxWindowBits
    }

    /// Whether the sender of `direction`'s messages keeps its window across messages.
    public func contextTakeover(for direction: WebSocketDirection) -> Bool {
        direction == .clientToServer ? !clientNoContextTakeover : !serverNoContextTakeover
    }

    /// The window size the sender of `direction`'s messages compresses with.
    public func windowBits(for direction: WebSocketDirection) -> Int {
        direction == .clientToServer ? clientMaxWindowBits : serverMaxWindowBits
    }

    /// What a response's `Sec-WebSocket-Extensions` value says about permessage-deflate.
    public enum Negotiation: Sendable, Equatable {
        /// No permessage-deflate: RSV1 must stay clear.
        case none
        case permessageDeflate(WebSocketDeflateParameters)
        /// A permessage-deflate element the client must refuse (RFC 7692 §5: an unknown or repeated
        /// parameter, a bad value, the extension twice); why, in words.
        case malformed(String)
    }

    /// Reads a response's `Sec-WebSocket-Extensions` value (several header lines joined with ", ").
    /// Other extensions are ignored; nil or empty means none.
    public static func negotiated(fromResponseHeader value: String?) -> Negotiation {
        guard let value else { return .none }
        var found: WebSocketDeflateParameters?
        for element in split(value, on: ",") {
            var parts = split(element, on: ";")
            guard !parts.isEmpty else { continue }
            let name = parts.removeFirst()
            guard name.lowercased() == "permessage-deflate" else { continue }
            if found != nil { return .malformed("permessage-deflate accepted twice") }
            switch parameters(parts) {
            case .success(let parameters): found = parameters
            case .failure(let reason): return .malformed(reason.text)
            }
        }
        return found.map { .permessageDeflate($0) } ?? .none
    }

    private struct Reason: Error {
        let text: String
    }

    private static func parameters(_ parts: [String]) -> Result<WebSocketDeflateParameters, Reason> {
        var result = WebSocketDeflateParameters()
        var seen: Set<String> = []
        for part in parts {
            let pieces = part.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map { trim(String($0)) }
            let name = pieces[0].lowercased()
            let value = pieces.count > 1 ? unquote(pieces[1]) : nil
            guard seen.insert(name).inserted else { return .failure(Reason(text: "parameter \(name) repeated")) }
            switch name {
            case "server_no_context_takeover", "client_no_context_takeover":
                guard value == nil else { return .failure(Reason(text: "parameter \(name) takes no value")) }
                if name.hasPrefix("server") { result.serverNoContextTakeover = true }
                else { result.clientNoContextTakeover = true }
            case "server_max_window_bits", "client_max_window_bits":
                // A response must give a value for both (RFC 7692 §7.1.2).
                guard let value, let bits = windowBits(value) else {
                    return .failure(Reason(text: "parameter \(name) needs a value from 8 to 15"))
                }
                if name.hasPrefix("server") { result.serverMaxWindowBits = bits }
                else { result.clientMaxWindowBits = bits }
            default:
                return .failure(Reason(text: "unknown parameter \(name.isEmpty ? "(empty)" : name)"))
            }
        }
        return .success(result)
    }

    /// 8 to 15, digits only with no leading zero (RFC 7692 §7.1.2.1).
    private static func windowBits(_ text: String) -> Int? {
        guard text.utf8.count <= 2, text.first != "0", text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
              let bits = Int(text), (8...15).contains(bits) else { return nil }
        return bits
    }

    /// Splits on `separator` outside quoted strings, trimming each piece and dropping empty ones
    /// (the `#` list rule allows empty elements).
    private static func split(_ text: String, on separator: Character) -> [String] {
        var pieces: [String] = []
        var current = ""
        var quoted = false
        var escaped = false
        for character in text {
            if escaped {
                escaped = false
            } else if quoted, character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == separator, !quoted {
                pieces.append(trim(current))
                current = ""
                continue
            }
            current.append(character)
        }
        pieces.append(trim(current))
        return pieces.filter { !$0.isEmpty }
    }

    private static func trim(_ text: String) -> String {
        String(text.drop(while: { $0 == " " || $0 == "\t" }).reversed().drop(while: { $0 == " " || $0 == "\t" }).reversed())
    }

    /// A quoted-string's content (RFC 9110 §5.6.4), or the token as it is.
    private static func unquote(_ text: String) -> String {
        guard text.count >= 2, text.first == "\"", text.last == "\"" else { return text }
        var result = ""
        var escaped = false
        for character in text.dropFirst().dropLast() {
            if !escaped, character == "\\" {
                escaped = true
                continue
            }
            escaped = false
            result.append(character)
        }
        return result
    }
}
