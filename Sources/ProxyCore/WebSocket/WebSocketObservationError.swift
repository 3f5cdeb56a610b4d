/// What an observer of a WebSocket direction found wrong, in one line of words.
///
/// Observation never touches the relay: these only say why the capture of a direction stopped or
/// why one message is incomplete. Two kinds (`stopsObserving`):
/// - framing violations (a reserved opcode or bit, a bad length, masking the wrong way, fragments
///   out of order): the frame boundaries can no longer be trusted, so `WebSocketFrameReader` stops
///   reading that direction and ignores everything after (the endpoint must fail the connection anyway);
/// - content problems in a message whose frames were sound (invalid UTF-8, a bad close body, a
///   payload that does not inflate): set on that `WebSocketMessage.issue`, and reading goes on.
public enum WebSocketObservationError: Error, Sendable, Equatable, Hashable, CustomStringConvertible {
    // Framing: the reader stops.
    /// Opcodes 3–7 and 0xB–0xF are reserved (RFC 6455 §5.2).
    case reservedOpcode(UInt8)
    /// RSV2 or RSV3 set: no negotiated extension defines them.
    case reservedBitSet
    /// RSV1 set while permessage-deflate was not negotiated for this reader.
    case compressionNotNegotiated
    /// RSV1 on a control frame or on a continuation frame (RFC 7692 §6.1: only a message's first frame).
    case compressionBitMisplaced(opcode: UInt8)
    /// A close, ping or pong longer than 125 bytes (RFC 6455 §5.5).
    case controlFrameTooLong(opcode: UInt8, length: UInt64)
    /// A close, ping or pong without FIN.
    case fragmentedControlFrame(opcode: UInt8)
    /// A 64-bit payload length with its most significant bit set (RFC 6455 §5.2).
    case lengthTopBitSet
    /// A client frame without a mask (RFC 6455 §5.1).
    case unmaskedClientFrame
    /// A server frame with a mask (RFC 6455 §5.1).
    case maskedServerFrame
    /// A continuation frame with no fragmented message open.
    case continuationWithoutStart
    /// A text or binary frame while a fragmented message waits for its continuation.
    case dataFrameInsideFragmentedMessage
    /// A frame after this direction's close frame (RFC 6455 §5.5.1: nothing may follow it).
    case frameAfterClose
    /// The stream ended in the middle of a frame or of a fragmented message (`finish()`).
    case endedMidMessage

    // Content: reported on the message, the reader goes on.
    /// A close body of one byte: a code takes two (RFC 6455 §5.5.1).
    case closeBodyTooShort
    /// A close code no endpoint may send (RFC 6455 §7.4.1–7.4.2: under 1000, 1004–1006, 1015,
    /// unassigned 1016–2999, 5000 and up).
    case invalidCloseCode(UInt16)
    /// A text message, or a close reason, that is not UTF-8 (RFC 6455 §8.1).
    case invalidUTF8
    /// The compressed payload did not inflate (zlib's words).
    case inflationFailed(String)

    /// Whether the reader stopped reading the direction after this.
    public var stopsObserving: Bool {
        switch self {
        case .closeBodyTooShort, .invalidCloseCode, .invalidUTF8, .inflationFailed: return false
        default: return true
        }
    }

    public var description: String {
        switch self {
        case .reservedOpcode(let opcode): return "frame with reserved opcode \(opcode)"
        case .reservedBitSet: return "frame with RSV2 or RSV3 set, which no extension negotiated"
        case .compressionNotNegotiated: return "compressed frame (RSV1) without permessage-deflate negotiated"
        case .compressionBitMisplaced(let opcode):
            return "RSV1 set on a frame with opcode \(opcode): only a data message's first frame may carry it"
        case .controlFrameTooLong(let opcode, let length):
            return "control frame (opcode \(opcode)) of \(length) bytes: at most 125 allowed"
        case .fragmentedControlFrame(let opcode): return "fragmented control frame (opcode \(opcode))"
        case .lengthTopBitSet: return "frame length with its most significant bit set"
        case .unmaskedClientFrame: return "client frame not masked"
        case .maskedServerFrame: return "server frame masked"
        case .continuationWithoutStart: return "continuation frame with no fragmented message to continue"
        case .dataFrameInsideFragmentedMessage: return "new data frame before the fragmented message ended"
        case .frameAfterClose: return "frame after the close frame"
        case .endedMidMessage: return "stream ended in the middle of a message"
        case .closeBodyTooShort: return "close frame body of one byte: a status code takes two"
        case .invalidCloseCode(let code): return "close code \(code) may not be sent"
        case .invalidUTF8: return "text is not valid UTF-8"
        case .inflationFailed(let reason): return "compressed message did not inflate: \(reason)"
        }
    }
}
