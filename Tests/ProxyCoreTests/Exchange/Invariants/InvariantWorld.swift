@testable import ProxyCore
import XCTest

// MARK: the world

/// Machine, environment and monitor: one node of the explored graph.
struct World: Hashable {
    var machine: ExchangeStateMachine
    var environment: Environment
    var monitor = Monitor()
    let http10: Bool

    init(config: StartConfig, synchronousHoldDecision: Bool = true, route: Bool = true) {
        machine = ExchangeStateMachine(request: config.request)
        var forwardsUpgrade = false
        if case .forward(.forwardsUpgrade) = config.route { forwardsUpgrade = true }
        environment = Environment(maxClientBodyParts: config.bodyParts, isHeadRequest: config.request.method == "HEAD",
                                  forwardsUpgrade: forwardsUpgrade, synchronousHoldDecision: synchronousHoldDecision)
        http10 = !config.request.understandsInterim
        if route { _ = start(config) }
    }

    /// `start`, then `routeDecided` if routing was asked; returns each step for a trace.
    mutating func start(_ config: StartConfig) -> [(Event, [ExchangeAction], [String])] {
        var steps: [(Event, [ExchangeAction], [String])] = []
        let actions = machine.start(fields: config.fields)
        steps.append((.start, actions, observe(.start, actions, wasFinished: false)))
        if actions.contains(.route) {
            let routed = machine.routeDecided(config.route.route)
            steps.append((.routeDecided, routed, observe(.routeDecided, routed, wasFinished: false)))
        }
        return steps
    }

    /// Delivers the events in turn; the problems found on the way.
    @discardableResult
    mutating func run(_ events: [Event]) -> [String] {
        events.flatMap { deliver($0).problems }
    }

    mutating func deliver(_ event: Event) -> (actions: [ExchangeAction], problems: [String]) {
        let wasFinished = machine.phase == .finished
        let before = machine
        let actions = send(event)
        return (actions, observe(event, actions, wasFinished: wasFinished) + commonListProblems(event, before, actions))
    }

    /// The events answered with a list made once (`CommonActions`) answer the same, and leave
    /// the same machine, as the general way of building their lists.
    private func commonListProblems(_ event: Event, _ before: ExchangeStateMachine, _ actions: [ExchangeAction]) -> [String] {
        var general = before
        let generalActions: [ExchangeAction]
        switch event {
        case .upstreamConnected(let reused, let bound):
            generalActions = general.upstreamConnected(reused: reused, boundToClient: bound, multiplexed: false,
                                                       usingCommonLists: false)
        case .upstreamStreamOpened(let reused):
            generalActions = general.upstreamConnected(reused: reused, boundToClient: false, multiplexed: true,
                                                       usingCommonLists: false)
        case .upstreamEnd:
            generalActions = general.upstreamEnd(usingCommonLists: false)
        default:
            return []
        }
        guard generalActions != actions || general != machine else { return [] }
        return ["a common action list differs from the general one: \(actions) vs \(generalActions)"
                + (general != machine ? " (and the machine's state differs)" : "")]
    }

    /// The environment's side of the event, then the machine's answer.
    private mutating func send(_ event: Event) -> [ExchangeAction] {
        let failure = ProxyFailure.upstreamClosed(host: "origin", port: 80)
        switch event {
        case .start, .routeDecided:
            return []
        case .clientBody:
            environment.clientBodyParts += 1
            return machine.clientBody()
        case .clientEnd:
            environment.clientEnded = true
            return machine.clientEnd()
        case .clientReadComplete:
            return machine.clientReadComplete()
        case .clientInputClosed:
            environment.clientInputClosed = true
            return machine.clientInputClosed()
        case .clientClosed:
            environment.clientOpen = false
            monitor.clientClosedEvent = true
            monitor.clientReadsOver()
            return machine.clientClosed(reason: "client closed")
        case .requestFailed:
            return machine.requestFailed(.badRequest(reason: "bad chunk"))
        case .requestStalled:
            return machine.requestStalled(seconds: 30)
        case .clientWritable(let writable):
            environment.clientWritable = writable
            return machine.clientWritabilityChanged(isWritable: writable)
        case .upstreamWritable(let writable):
            environment.upstreamWritable = writable
            return machine.upstreamWritabilityChanged(isWritable: writable)
        case .upstreamConnecting:
            environment.connection = .opening
            return machine.upstreamConnecting()
        case .upstreamConnected(let reused, let bound):
            attach(reused: reused, bound: bound)
            return machine.upstreamConnected(reused: reused, boundToClient: bound)
        case .upstreamStreamOpened(let reused):
            attach(reused: reused, bound: false)
            return machine.upstreamConnected(reused: reused, multiplexed: true)
        case .upstreamConnectFailed:
            environment.connection = .none
            return machine.upstreamConnectFailed(.connectionRefused(host: "origin", port: 80))
        case .upstreamHead(let head):
            if var origin = environment.attachedOrigin {
                if head.head.isInterim {
                    origin.interimSent = true
                } else {
                    origin.finalHead = head
                    if head.binds { monitor.connectionBound = true }
                }
                environment.connection = .attached(origin)
            }
            return machine.upstreamHead(status: head.head.status, fields: head.head.fields, keepAlive: head.keepAlive,
                                        bindsConnection: head.binds)
        case .upstreamBody:
            if var origin = environment.attachedOrigin {
                origin.bodyParts += 1
                environment.connection = .attached(origin)
            }
            return machine.upstreamBody()
        case .upstreamReadComplete:
            return machine.upstreamReadComplete()
        case .upstreamEnd:
            if var origin = environment.attachedOrigin {
                origin.ended = true
                environment.connection = .attached(origin)
            }
            monitor.upstreamEndSeen = true
            return machine.upstreamEnd()
        case .upstreamFailed(let mayRetry):
            environment.connection = .none
            monitor.upstreamReadsPaused = false
            return machine.upstreamFailed(failure, mayRetry: mayRetry)
        case .responseHoldDecided(let hold):
            environment.decisionOutstanding = false
            return machine.responseHoldDecided(hold: hold)
        case .requestReleased:
            environment.requestHeldOutstanding = false
            return machine.requestReleased()
        case .responseReleased:
            environment.responseHeldOutstanding = false
            return machine.responseReleased()
        case .holdAborted, .holdTimedOut:
            environment.requestHeldOutstanding = false
            environment.responseHeldOutstanding = false
            return event == .holdAborted ? machine.holdAborted() : machine.holdTimedOut(seconds: 60)
        case .requestHoldOverflowed:
            environment.requestHoldCanOverflow = false
            return machine.requestHoldOverflowed()
        case .responseHoldOverflowed:
            environment.responseHoldCanOverflow = false
            return machine.responseHoldOverflowed()
        case .localAnswerPrepared:
            environment.preparationOutstanding = false
            return machine.localAnswerPrepared()
        case .localAnswerFinished:
            environment.localAnswerWriting = false
            return machine.localAnswerFinished()
        case .localAnswerFailed:
            environment.localAnswerWriting = false
            return machine.localAnswerFailed(reason: "the file could not be read")
        case .writeStalled:
            environment.localAnswerWriting = false
            return machine.writeStalled(seconds: 30)
        }
    }

    /// Checks `actions` (returned for `event`) in order, carries them into the environment, then
    /// checks the state they led to. Each problem names its invariant.
    mutating func observe(_ event: Event, _ actions: [ExchangeAction], wasFinished: Bool? = nil) -> [String] {
        let wasFinished = wasFinished ?? (machine.phase == .finished)
        var problems: [String] = []
        func problem(_ invariant: Int, _ text: String) { problems.append("invariant \(invariant): \(text)") }
        func finalHead(_ action: ExchangeAction) {
            if monitor.finalHeads > 0 { problem(1, "a second final head: \(action)") }
            monitor.finalHeads += 1
        }
        func detach(_ action: ExchangeAction) {
            if environment.attachedOrigin == nil { problem(4, "\(action) without an attached connection") }
            environment.connection = .none
            monitor.upstreamReadsPaused = false
        }
        var readsResumed = false
        func closeClient() {
            monitor.clientClosedByAction = true
            environment.clientOpen = false
        }
        for action in actions {
            if readsResumed && [.sendRequestHead, .sendRequestBody, .sendBufferedRequestBody, .sendRequestEnd].contains(action) {
                problem(5, "\(action) after client reads resumed in the same actions")
            }
            if wasFinished && action != .closeUpstream && action != .discardLocalAnswer {
                problem(6, "\(action) from an exchange already finished")
            }
            if Self.writesToClient(action) { environment.clientWritten = true }
            if monitor.clientClosedByAction && Self.isClientAction(action) {
                problem(4, "\(action) after the client connection was closed by an action")
            }
            if Self.isUpstreamAction(action) && environment.attachedOrigin == nil {
                problem(4, "\(action) without an attached connection")
            }
            switch action {
            case .writeContinue, .writeInterimHead:
                if monitor.finalHeads > 0 { problem(1, "\(action) after the final head") }
                if http10 { problem(1, "\(action) to an HTTP/1.0 client") }
            case .startLocalAnswer:
                finalHead(action)
                environment.localAnswerWriting = true
            case .writeResponseHead, .writeReleasedResponse:
                finalHead(action)
            case .answer(_, let keepAlive, _):
                finalHead(action)
                monitor.responseEnded = true
                monitor.clientReadsOver()
                if !keepAlive { closeClient() }
            case .completeResponse(let close, _):
                if monitor.finalHeads != 1 || monitor.responseEnded { problem(1, "\(action) without one final head before it") }
                monitor.responseEnded = true
                monitor.clientReadsOver()
                if close { closeClient() }
            case .abortClient:
                monitor.aborted = true
                monitor.clientReadsOver()
                closeClient()
            case .switchToByteRelay:
                if monitor.finalHeads != 1 { problem(1, "\(action) without a final head before it") }
                // The driver removes the handler that paused the reads and reads at once
                // (`UpstreamHTTPHandler.removePipeline`): the relay starts unpaused.
                detach(action)
                monitor.responseEnded = true
                monitor.clientReadsOver()
                closeClient()
            case .writeResponseBody, .writeHeldResponseBody:
                if monitor.finalHeads != 1 || monitor.responseEnded { problem(1, "\(action) outside a response") }
            case .prepareLocalAnswer:
                environment.preparationOutstanding = true
            case .openUpstream(let allowReuse):
                if environment.connection != .none { problem(4, "\(action) while a connection is outstanding or attached") }
                environment.connection = .requested(allowReuse: allowReuse)
            case .sendRequestHead:
                if monitor.requestHeadSent { problem(4, "a second request head on one connection") }
                monitor.requestHeadSent = true
            case .sendRequestBody, .sendBufferedRequestBody:
                if !monitor.requestHeadSent || monitor.requestEndSent { problem(4, "\(action) outside the request") }
                if action == .sendBufferedRequestBody { monitor.bufferedRequestBody = false }
                if var origin = environment.attachedOrigin {
                    origin.bodySent = true
                    environment.connection = .attached(origin)
                }
            case .bufferRequestBody:
                monitor.bufferedRequestBody = true
                switch environment.connection {
                case .requested, .opening: break
                case .none, .attached: problem(4, "request body buffered for a connection that will never come")
                }
            case .bufferReleasedRequestBody:
                monitor.bufferedRequestBody = true
            case .sendRequestEnd:
                if !monitor.requestHeadSent || monitor.requestEndSent { problem(4, "\(action) outside the request") }
                if monitor.bufferedRequestBody { problem(4, "\(action) while buffered request body was never sent") }
                monitor.requestEndSent = true
            case .pauseUpstreamReads:
                monitor.upstreamReadsPaused = true
            case .resumeUpstreamReads:
                monitor.upstreamReadsPaused = false
            case .closeUpstream:
                detach(action)
            case .checkInUpstream(let boundToClient):
                let head = environment.attachedOrigin?.finalHead
                if !monitor.upstreamEndSeen { problem(2, "checked in before the response ended on it") }
                if !monitor.requestEndSent { problem(2, "checked in without the request's end sent on it") }
                if let head {
                    if !head.keepAlive { problem(2, "checked in though the origin closes it") }
                    if (head.head == .untilClose && !environment.isHeadRequest) || head.head == .switching101 {
                        problem(2, "checked in after \(head)")
                    }
                } else {
                    problem(2, "checked in without a final head")
                }
                if environment.forwardsUpgrade { problem(2, "checked in after forwarding an upgrade") }
                // The other way round (a connection kept for the client that no longer needs it) is
                // only a missed reuse.
                if monitor.connectionBound && !boundToClient { problem(2, "a connection bound to the client into the shared pool") }
                detach(action)
            case .holdRequestBody:
                environment.requestHoldCanOverflow = true
            case .requestHeld:
                environment.requestHeldOutstanding = true
                environment.requestHoldCanOverflow = false
            case .decideResponseHold:
                environment.decisionOutstanding = true
            case .holdResponseBody:
                environment.responseHoldCanOverflow = true
            case .responseHeld:
                environment.responseHeldOutstanding = true
                environment.responseHoldCanOverflow = false
            case .pauseClientReads(let reason):
                _ = monitor.setClientReads(reason, paused: true)
            case .resumeClientReads(let reason):
                if !monitor.setClientReads(reason, paused: false) { problem(5, "\(action) of reads not paused") }
                readsResumed = true
            case .record:
                monitor.records += 1
                if monitor.records > 1 { problem(3, "recorded a second time") }
            case .route, .discardLocalAnswer, .captureRequestBody, .flushUpstream, .prepareResponseHead, .flushClient,
                 .cancelWork:
                break
            }
        }
        problems += stateProblems()
        return problems
    }

    /// Invariants of the state itself.
    func stateProblems() -> [String] {
        var problems: [String] = []
        func problem(_ invariant: Int, _ text: String) { problems.append("invariant \(invariant): \(text)") }
        let finished = machine.phase == .finished
        if finished && monitor.records == 0 { problem(3, "finished without a record") }
        if !finished && monitor.records > 0 { problem(3, "recorded while not finished (\(machine.phase))") }
        if !finished && monitor.clientClosedByAction { problem(4, "the client was closed but the exchange goes on") }
        if finished {
            if !monitor.clientClosedEvent && !monitor.aborted {
                if monitor.finalHeads != 1 { problem(1, "finished with \(monitor.finalHeads) final heads written") }
                if !monitor.responseEnded { problem(1, "finished without ending the response") }
            }
            if monitor.clientReadsPaused { problem(5, "finished with client reads paused") }
            if monitor.upstreamReadsPaused { problem(5, "finished with upstream reads paused") }
        } else if !canMove {
            problem(7, "stuck: no event but a failure or a timeout can move it (\(environment.connection), "
                       + "client reads paused: \(monitor.clientReadsPaused))")
        }
        return problems
    }

    /// Some event that is not a failure or a timeout can still arrive.
    var canMove: Bool {
        let env = environment
        if env.decisionOutstanding || env.requestHeldOutstanding || env.responseHeldOutstanding
            || env.preparationOutstanding || env.localAnswerWriting { return true }
        switch env.connection {
        case .none: break
        case .requested, .opening: return true
        case .attached(let origin):
            // Reads held because the client is not writable resume when it is.
            if !origin.ended && (!monitor.upstreamReadsPaused || !env.clientWritable) { return true }
        }
        guard env.clientOpen && !env.clientEnded else { return false }
        // The client's reads resume only through an event that can still come.
        if monitor.pausedConnecting {
            if case .requested = env.connection {} else if env.connection != .opening { return false }
        }
        if monitor.pausedUpstreamBusy && (env.attachedOrigin == nil || env.upstreamWritable) { return false }
        return true
    }

    static func isClientAction(_ action: ExchangeAction) -> Bool {
        switch action {
        case .writeContinue, .startLocalAnswer, .writeResponseHead, .writeReleasedResponse, .writeInterimHead,
             .writeResponseBody, .writeHeldResponseBody, .flushClient, .pauseClientReads, .resumeClientReads,
             .completeResponse, .answer, .abortClient, .switchToByteRelay:
            return true
        default:
            return false
        }
    }

    static func writesToClient(_ action: ExchangeAction) -> Bool {
        switch action {
        case .writeContinue, .startLocalAnswer, .writeResponseHead, .writeReleasedResponse, .writeInterimHead,
             .writeResponseBody, .writeHeldResponseBody, .answer:
            return true
        default:
            return false
        }
    }

    static func isUpstreamAction(_ action: ExchangeAction) -> Bool {
        switch action {
        case .sendRequestHead, .sendRequestBody, .sendBufferedRequestBody, .sendRequestEnd, .flushUpstream,
             .pauseUpstreamReads, .resumeUpstreamReads:
            return true
        default:
            return false
        }
    }

    private mutating func attach(reused: Bool, bound: Bool) {
        environment.connection = .attached(Origin(reused: reused))
        environment.upstreamWritable = true
        monitor.requestHeadSent = false
        monitor.requestEndSent = false
        monitor.upstreamEndSeen = false
        monitor.connectionBound = bound
    }
}

