import Foundation

/// One WebSocket message as it crossed the proxy, stored with the flow of its upgrade.
///
/// It exists so a WebSocket flow shows what was said over it, not only its `101` handshake:
/// the capture keeps each message (direction, time, kind, payload) in the `messages` table,
/// written by the same batched writer as flows (`FlowSink.append(_:to:)`). Payloads are kept
/// decoded (permessage-deflate inflated) and bounded like bodies: past the flow's budget a
/// message is counted with its size but its payload is not kept (`truncated`).
public struct CapturedMessage: Sendable, Hashable {
    /// Who sent it. The raw values are what Chrome's HAR writes (`_webSocketMessages[].type`).
    public enum Direction: String, Sendable, Hashable, CaseIterable {
        /// Client to server.
        case sent = "send"
        /// Server to client.
        case received = "receive"
    }

    /// The message's opcode, by name.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        case text, binary, close, ping, pong

        /// RFC 6455's opcode number (HAR's `opcode`).
        public var opcode: Int {
            switch self {
            case .text: return 1
            case .binary: return 2
            case .close: return 8
            case .ping: return 9
            case .pong: return 10
            }
        }

        public init?(opcode: Int) {
            guard let kind = Self.allCases.first(where: { $0.opcode == opcode }) else { return nil }
            self = kind
        }
    }

    public var direction: Direction
    public var time: Date
    public var kind: Kind
    /// The payload as kept: decoded, at most the budget's share (empty when not kept).
    public var payload: Data
    /// The payload's full size (decoded when it was compressed).
    public var size: Int64
    /// Part or all of the payload was not kept.
    public var truncated: Bool
    /// It was sent compressed (permessage-deflate); `payload` is decoded.
    public var compressed: Bool
    /// For `close`: the status code and reason the sender gave, if any.
    public var closeCode: Int?
    public var closeReason: String?

    public init(direction: Direction, time: Date, kind: Kind, payload: Data, size: Int64? = nil,
                truncated: Bool = false, compressed: Bool = false, closeCode: Int? = nil, closeReason: String? = nil) {
        self.direction = direction
        self.time = time
        self.kind = kind
        self.payload = payload
        self.size = size ?? Int64(payload.count)
        self.truncated = truncated
        self.compressed = compressed
        self.closeCode = closeCode
        self.closeReason = closeReason
    }
}

/// Names a flow that goes on after it was recorded (a WebSocket), so messages and its final
/// counts can follow it to the writer before the writer has given it a row id.
public struct OpenFlowKey: Sendable, Hashable {
    public let value: UInt64

    public init(_ value: UInt64) {
        self.value = value
    }
}

/// What is known of an open flow once it ends: the bytes relayed each way, when it ended, why
/// it failed if it did, and a remark to add to its note.
public struct OpenFlowEnd: Sendable, Hashable {
    public var finishedAt: Date
    public var bytesUp: Int64
    public var bytesDown: Int64
    public var error: String?
    public var note: String?

    public init(finishedAt: Date, bytesUp: Int64, bytesDown: Int64, error: String? = nil, note: String? = nil) {
        self.finishedAt = finishedAt
        self.bytesUp = bytesUp
        self.bytesDown = bytesDown
        self.error = error
        self.note = note
    }
}
