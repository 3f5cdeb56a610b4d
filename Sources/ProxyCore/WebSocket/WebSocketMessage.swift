/// Which peer sent a WebSocket message. It decides the masking rule (RFC 6455 §5.1: a client masks
/// every frame, a server none) and which permessage-deflate parameters apply to its messages.
public enum WebSocketDirection: Sendable, Equatable, Hashable {
    case clientToServer
    case serverToClient
}

/// What kind of message a WebSocket message is (RFC 6455 §5.2). Continuation frames never show up
/// here: they are folded into the message their first frame started.
public enum WebSocketOpcode: UInt8, Sendable, Equatable, Hashable {
    case text = 0x1
    case binary = 0x2
    case close = 0x8
    case ping = 0x9
    case pong = 0xA

    /// Close, ping and pong: at most 125 bytes, never fragmented, allowed between a message's fragments.
    public var isControl: Bool { rawValue >= 0x8 }
}

/// One complete WebSocket message as a peer sent it, observed from a copy of the relayed bytes.
///
/// The relay forwards the bytes untouched; this is what the capture records of them. A data message
/// is all its frames put together (unmasked, and inflated when permessage-deflate compressed it and
/// an inflater was given); a control message is its single frame. Memory stays bounded, so the
/// payload may be only a prefix of the message (`isPayloadTruncated`), or empty; the sizes are
/// always counted in full.
public struct WebSocketMessage: Sendable, Equatable {
    public var direction: WebSocketDirection
    public var opcode: WebSocketOpcode
    /// The payload kept: unmasked; inflated when `isInflated`; a prefix of it when `isPayloadTruncated`.
    public var payload: [UInt8]
    /// Payload bytes on the wire: the frames' payload lengths added up (compressed, when compressed).
    public var wireSize: Int
    /// The payload's size as the application sees it: `wireSize` when not compressed, the inflated
    /// size when inflated in full, nil when a compressed message was not inflated to its end.
    public var payloadSize: Int?
    /// The first frame had RSV1 set: permessage-deflate compressed the message (RFC 7692 §6).
    public var isCompressed: Bool
    /// `payload` holds inflated bytes (false for a compressed message when no inflater was given or
    /// inflation could not start: `payload` then holds the compressed bytes, or nothing).
    public var isInflated: Bool
    /// `payload` is shorter than the message: the direction's budget ran out, or inflation stopped.
    public var isPayloadTruncated: Bool
    /// Frames the message arrived in (1 unless fragmented).
    public var frameCount: Int
    /// For a close message with a body: its status code (RFC 6455 §7.4).
    public var closeCode: UInt16?
    /// For a close message with a body: the reason after the code (empty when there is none).
    public var closeReason: String?
    /// What was wrong with the message's content though its framing was sound: invalid UTF-8, a bad
    /// close body, a payload that could not be inflated. The reader keeps going after these.
    public var issue: WebSocketObservationError?

    /// The payload as kept is the whole payload.
    public var isPayloadKept: Bool { !isPayloadTruncated }

    public init(direction: WebSocketDirection, opcode: WebSocketOpcode, payload: [UInt8], wireSize: Int,
                payloadSize: Int?, isCompressed: Bool = false, isInflated: Bool = false,
                isPayloadTruncated: Bool = false, frameCount: Int = 1, closeCode: UInt16? = nil,
                closeReason: String? = nil, issue: WebSocketObservationError? = nil) {
        self.direction = direction
        self.opcode = opcode
        self.payload = payload
        self.wireSize = wireSize
        self.payloadSize = payloadSize
        self.isCompressed = isCompressed
        self.isInflated = isInflated
        self.isPayloadTruncated = isPayloadTruncated
        self.frameCount = frameCount
        self.closeCode = closeCode
        self.closeReason = closeReason
        self.issue = issue
    }
}
