/// Reads one direction of a WebSocket connection (RFC 6455 framing, RFC 7692 compression) from
/// copies of the relayed bytes and yields each complete message, for the capture.
///
/// Why: after `101 Switching Protocols` the engine relays raw bytes both ways; the relay must stay
/// byte-exact and unaffected by whatever a peer sends, so observing is a separate, sans-IO reader
/// fed the same chunks afterwards. It never changes, holds or delays the relay.
///
/// Streaming: chunks may split a frame anywhere and hold many frames. At most 14 header bytes are
/// buffered; payload bytes pass straight into the message being built (unmasked; inflated through
/// `WebSocketPayloadInflating` when RSV1 says compressed), so a frame announcing 2^63 bytes costs
/// nothing but counting. Continuation frames join their message; control frames between fragments
/// come out on their own, in wire order (a ping inside a fragmented message is yielded first).
///
/// Memory is bounded by `payloadBudget`, the payload bytes this reader keeps over its whole life
/// (and optionally `maxMessagePayload` per message): past it messages still come out with their
/// sizes, frame counts and close codes, with a truncated or empty payload (`isPayloadTruncated`).
/// A compressed message is inflated only up to what it may keep, so a decompression bomb costs at
/// most the budget plus the inflater's fixed buffer; once nothing more may be kept, compressed
/// messages are not inflated at all. With context takeover a message not inflated to its end
/// leaves the window unknown, so later compressed messages of that direction that could still
/// keep bytes carry `inflationFailed` (and an empty payload) rather than wrong bytes.
///
/// Protocol violations (see `WebSocketObservationError`): a framing violation (reserved opcode or
/// bit, a control frame over 125 bytes or fragmented, a 64-bit length with its top bit set, masking
/// the wrong way, a continuation with nothing to continue, a new data message inside a fragmented
/// one, anything after a close frame) stops observing this direction: `failure` is set, the message
/// in progress is dropped, messages completed earlier in the same `feed` are still returned, and
/// later bytes are ignored at no cost. A content problem in a well-framed message (invalid UTF-8 in
/// text or a close reason, a one-byte close body, a forbidden close code, a payload that does not
/// inflate) is set on that message's `issue`, and reading goes on. Non-minimal length encodings
/// are accepted.
public struct WebSocketFrameReader {
    /// Whether permessage-deflate (RSV1) was negotiated for this connection.
    public enum Compression {
        /// No extension: RSV1 is a framing violation.
        case none
        /// permessage-deflate: compressed messages are inflated through `inflater` (built for this
        /// direction's parameters, `WebSocketDeflateParameters`); nil keeps their compressed bytes.
        case permessageDeflate(inflater: (any WebSocketPayloadInflating)?)
    }

    public let direction: WebSocketDirection
    /// The framing violation that stopped this reader; nil while it observes.
    public private(set) var failure: WebSocketObservationError?
    /// Payload bytes this reader may still keep.
    public private(set) var payloadBudgetRemaining: Int
    private let maxMessagePayload: Int
    private let compressionNegotiated: Bool
    private let inflater: (any WebSocketPayloadInflating)?

    /// The current frame header so far (2 to 14 bytes), while no payload is being read.
    private var header: [UInt8] = []
    /// The header's full length, known once its second byte is in.
    private var headerLength = 2
    /// The frame whose payload is being read.
    private var frame: Frame?
    /// The control frame's body so far (at most 125 bytes).
    private var controlBody: [UInt8] = []
    /// The data message open across frames.
    private var message: WebSocketMessageBuilder?
    /// A close frame was read: nothing may follow.
    private var closed = false
    /// Unmasked bytes of the current chunk (reused).
    private var scratch: [UInt8] = []
    /// Messages completed during the current `feed`.
    private var completed: [WebSocketMessage] = []

    /// - Parameters:
    ///   - payloadBudget: payload bytes kept over the reader's life (e.g. the capture's body limit).
    ///   - maxMessagePayload: payload bytes kept of any one message (default: no limit but the budget).
    public init(direction: WebSocketDirection, payloadBudget: Int, maxMessagePayload: Int = .max,
                compression: Compression = .none) {
        self.direction = direction
        payloadBudgetRemaining = max(0, payloadBudget)
        self.maxMessagePayload = max(0, maxMessagePayload)
        switch compression {
        case .none:
            compressionNegotiated = false
            inflater = nil
        case .permessageDeflate(let inflater):
            compressionNegotiated = true
            self.inflater = inflater
        }
        header.reserveCapacity(14)
    }

    /// Reads the next relayed bytes of this direction and returns the messages they completed.
    public mutating func feed(_ bytes: some Collection<UInt8>) -> [WebSocketMessage] {
        guard failure == nil, !bytes.isEmpty else { return [] }
        if bytes.withContiguousStorageIfAvailable({ feed(buffer: $0) }) == nil {
            Array(bytes).withUnsafeBufferPointer { feed(buffer: $0) }
        }
        let messages = completed
        completed.removeAll()
        return messages
    }

    /// The stream ended (connection closed): reports a frame or fragmented message left unfinished
    /// and stops observing; nil when the stream ended between messages.
    @discardableResult
    public mutating func finish() -> WebSocketObservationError? {
        guard failure == nil else { return nil }
        guard header.isEmpty, frame == nil, message == nil else {
            stop(.endedMidMessage)
            return failure
        }
        return nil
    }

    private mutating func feed(buffer: UnsafeBufferPointer<UInt8>) {
        var index = 0
        while index < buffer.count, failure == nil {
            guard let current = frame else {
                header.append(buffer[index])
                index += 1
                if header.count == 2 { headerLength = Self.headerLength(secondByte: header[1]) }
                if header.count == headerLength { startFrame() }
                continue
            }
            let count = Int(min(UInt64(buffer.count - index), current.remaining))
            payload(UnsafeBufferPointer(rebasing: buffer[index..<(index + count)]))
            index += count
        }
    }

    private static func headerLength(secondByte: UInt8) -> Int {
        let extended = switch secondByte & 0x7F {
        case 126: 2
        case 127: 8
        default: 0
        }
        return 2 + extended + (secondByte & 0x80 != 0 ? 4 : 0)
    }

    /// The header is complete: check it against the rules and the state, then read its payload.
    private mutating func startFrame() {
        let parsed = Frame(header: header)
        header.removeAll(keepingCapacity: true)
        headerLength = 2
        if let violation = violation(of: parsed) {
            stop(violation)
            return
        }
        frame = parsed
        if parsed.isControl {
            controlBody.removeAll(keepingCapacity: true)
        } else {
            if parsed.opcode != 0, let opcode = WebSocketOpcode(rawValue: parsed.opcode) {
                message = WebSocketMessageBuilder(opcode: opcode, isCompressed: parsed.rsv1,
                                                  messageLimit: maxMessagePayload, inflater: inflater)
            }
            message?.startFrame()
        }
        if parsed.remaining == 0 { endFrame() }
    }

    private func violation(of frame: Frame) -> WebSocketObservationError? {
        if closed { return .frameAfterClose }
        if frame.rsv2or3 { return .reservedBitSet }
        guard [0x0, 0x1, 0x2, 0x8, 0x9, 0xA].contains(frame.opcode) else { return .reservedOpcode(frame.opcode) }
        if frame.rsv1 {
            if !compressionNegotiated { return .compressionNotNegotiated }
            if frame.isControl || frame.opcode == 0 { return .compressionBitMisplaced(opcode: frame.opcode) }
        }
        if frame.lengthTopBitSet { return .lengthTopBitSet }
        if frame.isControl {
            if !frame.fin { return .fragmentedControlFrame(opcode: frame.opcode) }
            if frame.remaining > 125 { return .controlFrameTooLong(opcode: frame.opcode, length: frame.remaining) }
        } else if frame.opcode == 0, message == nil {
            return .continuationWithoutStart
        } else if frame.opcode != 0, message != nil {
            return .dataFrameInsideFragmentedMessage
        }
        switch direction {
        case .clientToServer where frame.maskKey == nil: return .unmaskedClientFrame
        case .serverToClient where frame.maskKey != nil: return .maskedServerFrame
        default: return nil
        }
    }

    /// Payload bytes of the current frame (no more than it has left).
    private mutating func payload(_ chunk: UnsafeBufferPointer<UInt8>) {
        guard var current = frame.take() else { return }
        let maskOffset = current.maskOffset
        current.consumed(chunk.count)
        frame = current
        if current.isControl {
            let start = controlBody.count
            controlBody.append(contentsOf: chunk)
            Self.unmask(&controlBody, from: start, key: current.maskKey, offset: maskOffset)
        } else if var building = message.take() {
            var budget = payloadBudgetRemaining
            if building.needsBytes(budget: budget) {
                scratch.removeAll(keepingCapacity: true)
                scratch.append(contentsOf: chunk)
                Self.unmask(&scratch, from: 0, key: current.maskKey, offset: maskOffset)
                building.append(scratch[...], budget: &budget, inflater: inflater)
            } else {
                building.skip(chunk.count)
            }
            payloadBudgetRemaining = budget
            message = building
        }
        if current.remaining == 0 { endFrame() }
    }

    /// The current frame's payload is all in.
    private mutating func endFrame() {
        guard let ended = frame.take() else { return }
        if ended.isControl {
            completed.append(controlMessage(opcode: ended.opcode))
        } else if ended.fin, var building = message.take() {
            var budget = payloadBudgetRemaining
            completed.append(building.finish(direction: direction, budget: &budget, inflater: inflater))
            payloadBudgetRemaining = budget
        }
    }

    private mutating func controlMessage(opcode raw: UInt8) -> WebSocketMessage {
        let opcode = WebSocketOpcode(rawValue: raw) ?? .close
        let kept = min(payloadBudgetRemaining, maxMessagePayload, controlBody.count)
        payloadBudgetRemaining -= kept
        var result = WebSocketMessage(direction: direction, opcode: opcode, payload: Array(controlBody.prefix(kept)),
                                      wireSize: controlBody.count, payloadSize: controlBody.count,
                                      isPayloadTruncated: kept < controlBody.count)
        if opcode == .close {
            closed = true
            WebSocketCloseBody.parse(controlBody, into: &result)
        }
        return result
    }

    private mutating func stop(_ violation: WebSocketObservationError) {
        failure = violation
        message.take()?.abandon(inflater: inflater)
        frame = nil
        header.removeAll()
    }

    /// XORs `bytes[start...]` with the mask, `offset` bytes into the frame's payload (RFC 6455 §5.3).
    private static func unmask(_ bytes: inout [UInt8], from start: Int, key: UInt32?, offset: Int) {
        guard let key else { return }
        let pattern = (0..<4).map { UInt8(truncatingIfNeeded: key >> (24 - 8 * (($0 + offset) & 3))) }
        bytes.withUnsafeMutableBufferPointer { buffer in
            for index in start..<buffer.count {
                buffer[index] ^= pattern[(index - start) & 3]
            }
        }
    }
}

extension WebSocketFrameReader {
    /// A frame's header, parsed, and how much of its payload is left.
    struct Frame {
        let fin: Bool
        let rsv1: Bool
        let rsv2or3: Bool
        let opcode: UInt8
        let maskKey: UInt32?
        let lengthTopBitSet: Bool
        private(set) var remaining: UInt64
        /// Payload bytes read so far, for the mask's phase.
        private(set) var maskOffset = 0

        var isControl: Bool { opcode & 0x8 != 0 }

        init(header: [UInt8]) {
            fin = header[0] & 0x80 != 0
            rsv1 = header[0] & 0x40 != 0
            rsv2or3 = header[0] & 0x30 != 0
            opcode = header[0] & 0x0F
            var length = UInt64(header[1] & 0x7F)
            var position = 2
            if length >= 126 {
                let size = length == 126 ? 2 : 8
                length = header[2..<(2 + size)].reduce(0) { $0 << 8 | UInt64($1) }
                position += size
            }
            lengthTopBitSet = length >> 63 != 0
            remaining = length
            maskKey = header[1] & 0x80 == 0 ? nil
                : header[position..<(position + 4)].reduce(0) { $0 << 8 | UInt32($1) }
        }

        mutating func consumed(_ count: Int) {
            remaining -= UInt64(count)
            maskOffset = (maskOffset + count) & 3
        }
    }
}
