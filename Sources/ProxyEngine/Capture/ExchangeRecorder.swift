import Foundation
import NIOCore
import NIOHTTP1
import ProxyModel

/// Builds the `Flow` of one HTTP exchange as its parts cross the proxy: heads, the first bytes of
/// each body up to the capture cap, and the timing phases.
///
/// It copies at most `cap` bytes per message and counts the rest, so a 2 GiB download costs the
/// same memory as a 16 MiB one. With a `spool` (the capture store's body files), a body that
/// reaches `CapturedBody.blockSize` is spooled: its blocks leave memory as they fill, and over
/// plain HTTP its large parts go to the spool in their receive buffers, not copied on the event
/// loop (`sharedPartMinimum`).
struct ExchangeRecorder {
    private(set) var flow: Flow
    private let cap: Int
    /// Whether large parts may go to the spool in their receive buffers (`sharedPartMinimum`):
    /// only for plain HTTP. NIOSSL decrypts into one buffer it reuses at its next read; kept
    /// alive by the spool, that buffer is copied whole (up to 512 KiB) before the read, which
    /// costs more than copying the part.
    private let sharesReceiveBuffers: Bool
    private let spool: BodySpoolFactory?
    private var connected: NIODeadline?
    private var requestSent: NIODeadline?
    private var responseStarted: NIODeadline?
    /// When the exchange waited at breakpoints (a person deciding): not network time, so left
    /// out of `send` and `wait` and recorded as `hold`.
    private var holds: [Range<NIODeadline>] = []
    private var expectedRequestLength: Int?
    private var expectedResponseLength: Int?

    /// - Parameter clientTLS: the client side's TLS, for a decrypted exchange (the origin's side
    ///   comes with the connection).
    /// - Parameter streamID: the client's HTTP/2 stream (nil for HTTP/1).
    /// - Parameter replayOf: the flow this exchange sends again (a replay), nil for a client's own.
    init(clientAddress: String, method: String, scheme: String, host: String, port: Int, path: String,
         version: HTTPVersion, headers: HTTPHeaders, cap: Int, spool: BodySpoolFactory? = nil,
         clientTLS: TLSDetails? = nil, streamID: Int? = nil, replayOf: Int64? = nil) {
        self.cap = cap
        self.spool = spool
        sharesReceiveBuffers = scheme == "http"
        self.flow = Flow(
            kind: .http, clientAddress: clientAddress, startedAt: Date(), method: method, scheme: scheme,
            host: host, port: port, path: path, httpVersion: Self.versionText(version),
            requestHeaders: Self.requestFields(headers), tls: clientTLS, streamID: streamID, replayOf: replayOf)
        expectedRequestLength = Self.expectedLength(headers, cap: cap)
    }

    /// Content-Length, when the head gives one: it sizes the first capture block
    /// (`CapturedBody.append(_:expected:)`) instead of growing it step by step.
    private static func expectedLength(_ headers: HTTPHeaders, cap: Int) -> Int? {
        guard let text = headers.first(name: "content-length"), let length = Int(text), length > 0 else { return nil }
        return min(length, cap)
    }

    /// A client request's fields as captured: `Proxy-Authorization` (the proxy's own
    /// credentials, `--auth`) is kept as `REDACTED`, never its value.
    static func requestFields(_ headers: HTTPHeaders) -> [HeaderField] {
        var fields = fields(headers)
        for index in fields.indices where fields[index].name.utf8.count == 19
            && fields[index].name.lowercased() == "proxy-authorization" {
            fields[index].value = "REDACTED"
        }
        return fields
    }

    static func versionText(_ version: HTTPVersion) -> String {
        "HTTP/\(version.major).\(version.minor)"
    }

    static func fields(_ headers: HTTPHeaders) -> [HeaderField] {
        var fields: [HeaderField] = []
        fields.reserveCapacity(headers.count)
        for (name, value) in headers {
            fields.append(HeaderField(name: name, value: value))
        }
        return fields
    }

    /// The trailers relayed after the response body.
    mutating func responseTrailers(_ trailers: HTTPHeaders) {
        flow.responseTrailers = Self.fields(trailers)
    }

    /// A rule acted on the exchange (its name goes on the flow), and/or a remark about what it
    /// did (joined to any earlier note with "; ").
    mutating func applied(rule: String?, note: String?) {
        if let rule { flow.appliedRules.append(rule) }
        if let note { flow.note = flow.note.map { "\($0); \(note)" } ?? note }
    }

    /// A rule changed the request: what went to the origin (`body` nil: the client's body, unchanged).
    mutating func forwarded(_ head: HTTPRequestHead, scheme: String, host: String, port: Int, body: [UInt8]?) {
        flow.forwardedRequest = ForwardedRequest(
            method: head.method.rawValue, scheme: scheme, host: host, port: port, path: head.uri,
            headers: Self.fields(head.headers), body: body.map { Self.captured($0, cap: cap) })
    }

    /// A rule changed the response: what the origin sent (`body` nil: the client got it unchanged).
    mutating func originResponse(_ head: HTTPResponseHead, body: HeldBody?) {
        flow.originResponse = OriginResponse(
            status: Int(head.status.code), reason: head.status.reasonPhrase, headers: Self.fields(head.headers),
            body: body.map { CapturedBody(bytes: Data($0.prefix(cap)), size: Int64($0.size), truncated: $0.size > cap) })
    }

    /// The first `cap` bytes of a whole body, with its full size.
    private static func captured(_ bytes: [UInt8], cap: Int) -> CapturedBody {
        CapturedBody(bytes: Data(bytes.prefix(cap)), size: Int64(bytes.count), truncated: bytes.count > cap)
    }

    mutating func upstreamConnected(_ timings: UpstreamConnectTimings, tls: UpstreamTLSSession? = nil,
                                    serverAddress: String? = nil) {
        flow.serverAddress = serverAddress
        flow.timings.dns = timings.dns
        flow.timings.connect = timings.connect
        flow.timings.tls = timings.tls
        if let tls, flow.tls != nil {
            flow.tls?.upstreamVersion = tls.version
            flow.tls?.upstreamSubject = tls.certificate?.subject
            flow.tls?.upstreamIssuer = tls.certificate?.issuer
            flow.tls?.upstreamNotAfter = tls.certificate?.notAfter
        }
        connected = .now()
    }

    mutating func requestBody(_ buffer: ByteBuffer) {
        Self.capture(buffer, into: &flow.requestBody, cap: cap, expected: expectedRequestLength, spool: spool,
                     sharing: sharesReceiveBuffers)
    }

    mutating func requestFullySent() {
        let now = NIODeadline.now()
        requestSent = now
        if let connected {
            flow.timings.send = networkMilliseconds(from: connected, to: now)
        }
    }

    mutating func responseHead(_ head: HTTPResponseHead) {
        let now = NIODeadline.now()
        responseStarted = now
        flow.status = Int(head.status.code)
        flow.reason = head.status.reasonPhrase
        flow.responseHeaders = Self.fields(head.headers)
        expectedResponseLength = Self.expectedLength(head.headers, cap: cap)
        if let requestSent {
            flow.timings.wait = networkMilliseconds(from: requestSent, to: now)
        } else if connected != nil {
            flow.timings.wait = 0  // the origin answered before the request body was complete
        }
    }

    /// The response's trailers were not relayed after all (an edited response framed by length).
    mutating func droppedResponseTrailers() {
        flow.responseTrailers = []
    }

    /// The exchange waited at a breakpoint from `start` to `end`.
    mutating func held(from start: NIODeadline, to end: NIODeadline) {
        guard start < end else { return }
        holds.append(start..<end)
        flow.timings.hold = max(flow.timings.hold, 0) + UpstreamConnector.milliseconds(from: start, to: end)
    }

    /// The milliseconds from `start` to `end` that were not spent held at a breakpoint.
    private func networkMilliseconds(from start: NIODeadline, to end: NIODeadline) -> Double {
        var elapsed = end - start
        for hold in holds {
            let overlap = min(end, hold.upperBound) - max(start, hold.lowerBound)
            if overlap > .zero { elapsed = elapsed - overlap }
        }
        return Double(max(elapsed, .zero).nanoseconds) / 1_000_000
    }

    mutating func responseBody(_ buffer: ByteBuffer) {
        Self.capture(buffer, into: &flow.responseBody, cap: cap, expected: expectedResponseLength, spool: spool,
                     sharing: sharesReceiveBuffers)
    }

    /// The finished flow; `error` is set when the exchange failed. The flow is moved out, not
    /// copied (a copy retains every field, then the recorder's own is released on the event
    /// loop): an exchange records once, and the recorder keeps a blank flow after.
    mutating func finish(error: String?) -> Flow {
        let now = NIODeadline.now()
        if let responseStarted {
            flow.timings.receive = UpstreamConnector.milliseconds(from: responseStarted, to: now)
        }
        flow.finishedAt = Date()
        flow.requestBody.finishSpooling()
        flow.responseBody.finishSpooling()
        if let error, flow.error == nil {
            flow.error = error
        }
        var finished = Self.blank
        swap(&finished, &flow)
        return finished
    }

    /// What a recorder holds once its flow has been taken: empty strings and arrays, nothing
    /// allocated.
    private static let blank = Flow(startedAt: Date(timeIntervalSinceReferenceDate: 0))

    private static func capture(_ buffer: ByteBuffer, into body: inout CapturedBody, cap: Int, expected: Int?,
                                spool: BodySpoolFactory?, sharing: Bool) {
        let count = buffer.readableBytes
        body.size += Int64(count)
        let room = cap - body.storedCount
        if room >= count, sharing, body.spool != nil, count >= sharedPartMinimum, count * 2 >= buffer.storageCapacity {
            body.append(shared: sharedData(buffer))
        } else if room >= count {
            buffer.withUnsafeReadableBytes { body.append($0, expected: expected) }
        } else {
            if room > 0 {
                buffer.withUnsafeReadableBytes { body.append(UnsafeRawBufferPointer(rebasing: $0.prefix(room)), expected: expected) }
            }
            body.truncated = true
        }
        if body.spool == nil, body.storedCount >= CapturedBody.blockSize, let spool, let target = spool() {
            body.startSpooling(target)
        }
    }
}

extension ExchangeRecorder {
    /// Parts of a spooled body this large go to the spool in their receive buffer (`sharedData`)
    /// rather than copied into a block on the event loop, when they fill at least half of that
    /// buffer: a small part never keeps a large buffer alive until the spool has written it.
    static let sharedPartMinimum = 32 << 10

    /// The readable bytes of `buffer` as `Data` without a copy: the `Data` keeps the buffer's
    /// storage alive, and a storage referenced twice is never written in place (NIO copies it on
    /// write), so the bytes stay as they are until the spool has written them.
    static func sharedData(_ buffer: ByteBuffer) -> Data {
        buffer.withUnsafeReadableBytes { bytes in
            Data(bytesNoCopy: UnsafeMutableRawPointer(mutating: bytes.baseAddress!), count: bytes.count,
                 deallocator: .custom { _, _ in withExtendedLifetime(buffer) {} })
        }
    }
}

/// Makes the spool of one body (nil: keep it in memory); `ProxyConfiguration.bodySpool`.
public typealias BodySpoolFactory = @Sendable () -> (any BodySpool)?
