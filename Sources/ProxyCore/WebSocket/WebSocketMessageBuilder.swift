/// The data message `WebSocketFrameReader` is putting together from its frames: keeps what the
/// budget allows, counts everything, checks text as it streams and feeds compressed bytes to the
/// inflater as they come, so nothing but the kept payload ever grows with the message.
struct WebSocketMessageBuilder {
    let opcode: WebSocketOpcode
    /// RSV1 on the first frame.
    let isCompressed: Bool
    /// Most payload bytes this message may keep, on top of the direction's budget.
    let messageLimit: Int
    /// The inflater is still being fed (compressed, an inflater given, no limit or error met yet).
    private var inflating: Bool
    private let hasInflater: Bool
    private(set) var payload: [UInt8] = []
    private(set) var wireSize = 0
    private(set) var isTruncated = false
    private(set) var frameCount = 0
    private(set) var issue: WebSocketObservationError?
    private var utf8 = UTF8StreamValidator()

    init(opcode: WebSocketOpcode, isCompressed: Bool, messageLimit: Int, inflater: (any WebSocketPayloadInflating)?) {
        self.opcode = opcode
        self.isCompressed = isCompressed
        self.messageLimit = messageLimit
        hasInflater = inflater != nil
        inflating = isCompressed && inflater != nil
    }

    mutating func startFrame() {
        frameCount += 1
    }

    /// Whether the next payload bytes must be looked at (unmasked): to keep, inflate or check them.
    func needsBytes(budget: Int) -> Bool {
        if inflating { return true }
        if opcode == .text, !isCompressed, !utf8.isInvalid { return true }
        return room(budget: budget) > 0 && (!isCompressed || !hasInflater)
    }

    /// Payload bytes that were not looked at: counted, not kept.
    mutating func skip(_ count: Int) {
        wireSize = wireSize.addingSaturating(count)
        if count > 0 { isTruncated = true }
    }

    /// The next payload bytes, unmasked.
    mutating func append(_ bytes: ArraySlice<UInt8>, budget: inout Int, inflater: (any WebSocketPayloadInflating)?) {
        wireSize = wireSize.addingSaturating(bytes.count)
        guard isCompressed else {
            keep(bytes, budget: &budget)
            if opcode == .text { utf8.validate(bytes) }
            return
        }
        guard let inflater else {
            keep(bytes, budget: &budget)  // no inflater: the compressed bytes, as sent
            return
        }
        guard inflating else { return }
        inflate(budget: &budget, inflater: inflater) { output, limit in
            try inflater.inflate(bytes, into: &output, limit: limit)
        }
    }

    /// The message's last frame ended: the message as observed.
    mutating func finish(direction: WebSocketDirection, budget: inout Int,
                         inflater: (any WebSocketPayloadInflating)?) -> WebSocketMessage {
        if inflating, let inflater {
            inflate(budget: &budget, inflater: inflater) { output, limit in
                try inflater.finishMessage(into: &output, limit: limit)
            }
        }
        // Uncompressed text was checked byte by byte whether kept or not; inflated text only as far
        // as it was inflated, so an unfinished last character counts only when inflation finished.
        let sawWholeText = !isCompressed || inflating
        if opcode == .text, issue == nil, utf8.isInvalid || (sawWholeText && !utf8.isComplete) {
            issue = .invalidUTF8
        }
        let payloadSize: Int? = !isCompressed ? wireSize : (inflating ? payload.count : nil)
        return WebSocketMessage(direction: direction, opcode: opcode, payload: payload, wireSize: wireSize,
                                payloadSize: payloadSize, isCompressed: isCompressed,
                                isInflated: isCompressed && hasInflater, isPayloadTruncated: isTruncated,
                                frameCount: frameCount, issue: issue)
    }

    /// Gives up a message cut short (the reader stopped): the inflater must start afresh.
    func abandon(inflater: (any WebSocketPayloadInflating)?) {
        if inflating { inflater?.abandonMessage() }
    }

    private func room(budget: Int) -> Int {
        max(0, min(budget, messageLimit - payload.count))
    }

    private mutating func keep(_ bytes: ArraySlice<UInt8>, budget: inout Int) {
        let count = min(room(budget: budget), bytes.count)
        payload.append(contentsOf: bytes.prefix(count))
        budget -= count
        if count < bytes.count { isTruncated = true }
    }

    /// One inflater call with the output bounded by what the message may still keep; a limit met or
    /// an error ends inflation for this message (the inflater is told to abandon it). A message that
    /// may keep nothing at all is not inflated.
    private mutating func inflate(budget: inout Int, inflater: any WebSocketPayloadInflating,
                                  _ call: (inout [UInt8], Int) throws -> Bool) {
        let before = payload.count
        let limit = before + room(budget: budget)
        var complete = false
        // A message that may keep nothing (the budget is spent) is not inflated and has no issue;
        // with context takeover the inflater's window is lost from here on.
        if limit > 0 {
            do {
                complete = try call(&payload, limit)
            } catch {
                issue = .inflationFailed("\(error)")
            }
        }
        if payload.count > limit { payload.removeLast(payload.count - limit) }  // an inflater past its contract
        budget -= payload.count - before
        if opcode == .text { utf8.validate(payload[before...]) }
        if !complete {
            inflating = false
            isTruncated = true
            inflater.abandonMessage()
        }
    }
}

extension Int {
    /// Sizes add up without trapping: a peer may announce frames of up to 2^63 - 1 bytes each.
    func addingSaturating(_ other: Int) -> Int {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? .max : sum
    }
}
