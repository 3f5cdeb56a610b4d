@testable import ProxyCore
import XCTest

// MARK: the environment

/// What the origin did on the attached connection.
struct Origin: Hashable {
    /// A pooled connection (or the client's bound one): only its failure may allow a retry.
    var reused = false
    /// A request-body part went out on it: only then does the driver report it unwritable
    /// (`ExchangeDriver.sendUpstream`).
    var bodySent = false
    /// One interim head per connection is enough to check where interim heads may go.
    var interimSent = false
    var finalHead: HeadEvent?
    var bodyParts = 0
    var ended = false
}

enum Connection: Hashable {
    case none
    /// `openUpstream` outstanding: the driver reports connected or connecting.
    case requested(allowReuse: Bool)
    case opening
    case attached(Origin)
}

/// The driver, client and origin: what has been asked of them and what they can still deliver.
struct Environment: Hashable {
    let maxClientBodyParts: Int
    let isHeadRequest: Bool
    let forwardsUpgrade: Bool
    /// The driver decides a response hold at once (`ExchangeDriver.decideResponseHold`): nothing
    /// else arrives meanwhile.
    var synchronousHoldDecision = true
    var clientOpen = true
    var clientBodyParts = 0
    var clientEnded = false
    var clientInputClosed = false
    var clientWritable = true
    /// Something of a response (an interim head included) was written: only a write fills the
    /// client's buffer.
    var clientWritten = false
    var upstreamWritable = true
    var connection = Connection.none
    var decisionOutstanding = false
    var requestHeldOutstanding = false
    var responseHeldOutstanding = false
    var requestHoldCanOverflow = false
    var responseHoldCanOverflow = false
    var preparationOutstanding = false
    var localAnswerWriting = false

    static let maxUpstreamBodyParts = 1

    var events: [Event] {
        if decisionOutstanding && synchronousHoldDecision { return [.responseHoldDecided(true), .responseHoldDecided(false)] }
        var events: [Event] = []
        if clientOpen {
            if !clientEnded {
                if clientBodyParts < maxClientBodyParts { events.append(.clientBody) }
                if clientBodyParts > 0 || maxClientBodyParts == 0 { events.append(.clientEnd) }
            }
            events += [.clientReadComplete, .clientClosed, .requestFailed, .requestStalled]
            // The channel reports both ways; the driver reports "not writable" again after each
            // response-body part it writes (`ExchangeDriver.relayResponseBody`).
            if clientWritten && (clientWritable || attachedOrigin?.finalHead != nil) { events.append(.clientWritable(false)) }
            if !clientWritable { events.append(.clientWritable(true)) }
            // A FIN after the request (one before its end makes the decoder fail: requestFailed).
            if clientEnded && !clientInputClosed { events.append(.clientInputClosed) }
        }
        switch connection {
        case .none:
            break
        case .requested(let allowReuse):
            events += [.upstreamConnecting, .upstreamConnected(reused: false, bound: false)]
            if allowReuse { events += [.upstreamConnected(reused: true, bound: false), .upstreamConnected(reused: true, bound: true)] }
        case .opening:
            events += [.upstreamConnected(reused: false, bound: false), .upstreamStreamOpened(reused: false),
                       .upstreamStreamOpened(reused: true), .upstreamConnectFailed]
        case .attached(let origin):
            if let head = origin.finalHead {
                if !origin.ended {
                    if hasBody(head.head) && origin.bodyParts < Self.maxUpstreamBodyParts { events.append(.upstreamBody) }
                    events.append(.upstreamEnd)
                }
            } else {
                events += HeadEvent.all.filter { !(origin.interimSent && $0.head.isInterim) }.map { .upstreamHead($0) }
            }
            events += [.upstreamReadComplete, .upstreamFailed(mayRetry: true)]
            if origin.bodySent && upstreamWritable { events.append(.upstreamWritable(false)) }
            // A timeout (no retry) differs from a close only where a retry could happen.
            if origin.reused { events.append(.upstreamFailed(mayRetry: false)) }
            if !upstreamWritable { events.append(.upstreamWritable(true)) }
        }
        if decisionOutstanding { events += [.responseHoldDecided(true), .responseHoldDecided(false)] }
        if requestHeldOutstanding { events.append(.requestReleased) }
        if responseHeldOutstanding { events.append(.responseReleased) }
        if requestHeldOutstanding || responseHeldOutstanding { events += [.holdAborted, .holdTimedOut] }
        if requestHoldCanOverflow { events.append(.requestHoldOverflowed) }
        if responseHoldCanOverflow { events.append(.responseHoldOverflowed) }
        if preparationOutstanding { events.append(.localAnswerPrepared) }
        if localAnswerWriting { events += [.localAnswerFinished, .localAnswerFailed, .writeStalled] }
        return events
    }

    func hasBody(_ head: Head) -> Bool {
        !isHeadRequest && [.contentLength, .chunked, .untilClose].contains(head)
    }

    var attachedOrigin: Origin? {
        if case .attached(let origin) = connection { return origin }
        return nil
    }
}

// MARK: the monitor

/// What the actions so far did, as far as the invariants care.
struct Monitor: Hashable {
    var finalHeads = 0
    var responseEnded = false
    /// An action closed the client connection (abort, close after the response, relay).
    var clientClosedByAction = false
    var aborted = false
    var clientClosedEvent = false
    var records = 0
    var pausedConnecting = false
    var pausedUpstreamBusy = false

    var clientReadsPaused: Bool { pausedConnecting || pausedUpstreamBusy }

    mutating func setClientReads(_ reason: ClientReadPause, paused: Bool) -> Bool {
        switch reason {
        case .connecting:
            defer { pausedConnecting = paused }
            return pausedConnecting
        case .upstreamBusy:
            defer { pausedUpstreamBusy = paused }
            return pausedUpstreamBusy
        }
    }

    mutating func clientReadsOver() {
        pausedConnecting = false
        pausedUpstreamBusy = false
    }
    var upstreamReadsPaused = false
    /// On the attached connection.
    var requestHeadSent = false
    var requestEndSent = false
    var upstreamEndSeen = false
    var connectionBound = false
    var bufferedRequestBody = false
}

