import Foundation
import ProxyModel

/// Maps one decoded HAR entry to a `Flow`.
///
/// The mapping:
/// - URL: hand-split (`HARURLParts`: http/https/ws/wss, ws → http, IPv6 brackets stripped,
///   default ports, fragment dropped; a CONNECT takes `host:port`).
/// - Version: normalised (`HARHTTPVersion`: `h2`, `http/2.0`, `HTTP/2` → `HTTP/2.0`; `h3` →
///   `HTTP/3.0`); an empty one takes the response's, else HTTP/1.1.
/// - Dates: any fraction, `Z`, `±HH:MM` or `±HHMM` (`ISO8601Timestamp`).
/// - Timings: the writer's convention inverted (`HARTimingsMapping`).
/// - Status 0 or no response: `status` nil. The error is `_error` (entry, then response) or,
///   without a status, the response's or the entry's `comment`.
/// - `connection` becomes `clientAddress` only when it reads `ip:port`.
/// - Bodies: encoded again per `Content-Encoding` (`HARBodyRestorer`); `size` is the HAR's
///   `bodySize`, never below the bytes held.
///
/// Every semantic failure (an unparseable URL or date, bad base64, a control character where the
/// store would keep it but a replay would send something else) is a `HARImportError` naming the
/// entry's JSON path, like the reader's type errors. Bodies longer than `bodyLimit` keep their
/// first `bodyLimit` bytes, as live capture does (`truncated`, the full size, and a note).
struct HARFlowMapper {
    private let entry: HARInput.Entry
    /// `log.entries[3]`
    private let path: String
    private let remarks: HARWriterRemarks
    private let bodyLimit: Int
    private var notes: [String] = []

    static func flow(from entry: HARInput.Entry, index: Int, bodyLimit: Int = .max) throws(HARImportError) -> Flow {
        var mapper = HARFlowMapper(entry: entry, path: "log.entries[\(index)]", bodyLimit: bodyLimit)
        return try mapper.flow()
    }

    private init(entry: HARInput.Entry, path: String, bodyLimit: Int) {
        self.entry = entry
        self.path = path
        self.bodyLimit = bodyLimit
        remarks = HARWriterRemarks(comment: entry.comment)
    }

    private func failure(_ field: String, _ reason: String) -> HARImportError {
        HARImportError(path: "\(path).\(field)", reason: reason)
    }

    private mutating func flow() throws(HARImportError) -> Flow {
        guard let startedAt = ISO8601Timestamp.parse(entry.startedDateTime) else {
            throw failure("startedDateTime", "not an ISO 8601 date and time: '\(entry.startedDateTime)'")
        }
        let request = entry.request
        guard !request.method.isEmpty else { throw failure("request.method", "empty method") }
        if let problem = HARFieldCheck.method(request.method) { throw failure("request.method", problem) }
        if let problem = HARFieldCheck.url(request.url) { throw failure("request.url", problem) }
        try checkVersionsAndHeaders()
        let isTunnel = entry.kind == "tunnel" || request.method.uppercased() == "CONNECT"
        let url = try urlParts(request.url, tunnel: isTunnel)

        // Tunnels are stored with scheme `tcp`, as the engine records them (the HAR url's
        // `https://` is only there because HAR needs a URL).
        var flow = Flow(kind: isTunnel ? .tunnel : .http, startedAt: startedAt, method: request.method,
                        scheme: isTunnel ? "tcp" : url.scheme, host: url.host, port: url.port, path: url.path)
        if let time = try duration(entry.time, field: "time"), time >= 0 {
            flow.finishedAt = startedAt.addingTimeInterval(time / 1000)
        }
        try checkTimings()
        flow.timings = HARTimingsMapping.flowTimings(entry.timings)
        flow.httpVersion = HARHTTPVersion.forFlow(request: request.httpVersion, response: entry.response?.httpVersion)
        flow.requestHeaders = Self.headers(request.headers)
        flow.requestBody = try requestBody(request, headers: flow.requestHeaders)
        try mapResponse(into: &flow)
        flow.serverAddress = entry.serverIPAddress.flatMap(Self.unbracketed)
        flow.clientAddress = entry.connection.flatMap(Self.clientAddress) ?? ""
        flow.tls = try tlsDetails()
        flow.bytesUp = Self.count(entry.bytesUp)
        flow.bytesDown = Self.count(entry.bytesDown)
        flow.marked = entry.marked ?? false
        flow.appliedRules = entry.rules ?? []
        let allNotes = [entry.note].compactMap { $0 }.filter { !$0.isEmpty } + notes
        flow.note = allNotes.isEmpty ? nil : allNotes.joined(separator: "; ")
        if let forwarded = entry.forwarded { try mapOriginSide(forwarded, into: &flow) }
        if let messages = entry.webSocketMessages, !messages.isEmpty {
            flow.webSocketMessages = try webSocketMessages(messages, startedAt: startedAt)
            flow.messageCount = flow.webSocketMessages?.count ?? 0
        }
        return flow
    }

    /// `_webSocketMessages` as `CapturedMessage`s: a message whose `type` or `opcode` is not one
    /// WebSocket has is an error naming it; a missing time is the entry's start.
    private func webSocketMessages(_ messages: [HARInput.WebSocketMessage],
                                   startedAt: Date) throws(HARImportError) -> [CapturedMessage] {
        var captured: [CapturedMessage] = []
        captured.reserveCapacity(messages.count)
        for (index, message) in messages.enumerated() {
            let field = "_webSocketMessages[\(index)]"
            guard let type = message.type, let direction = CapturedMessage.Direction(rawValue: type) else {
                throw failure("\(field).type", "not send or receive: '\(message.type ?? "null")'")
            }
            guard let opcode = message.opcode, let kind = CapturedMessage.Kind(opcode: Int(exactly: opcode) ?? -1) else {
                throw failure("\(field).opcode", "not a WebSocket opcode (1, 2, 8, 9, 10): \(message.opcode.map { "\($0)" } ?? "null")")
            }
            let decoded: HARBodyRestorer.Decoded?
            do {
                decoded = try HARBodyRestorer.decodedBytes(
                    text: message.data, encoding: message.encoding ?? (kind == .binary && message.data != nil ? "base64" : nil))
            } catch {
                throw failure("\(field).data", "not valid base64")
            }
            var payload = Data(decoded?.bytes ?? [])
            var closeReason: String?
            if kind == .close {
                closeReason = String(decoding: payload, as: UTF8.self)
                payload = Data()
            }
            let size = message.size.flatMap { Int64(exactly: $0) } ?? decoded?.size ?? 0
            captured.append(CapturedMessage(
                direction: direction, time: message.time.map { Date(timeIntervalSince1970: $0) } ?? startedAt, kind: kind,
                payload: payload, size: size, truncated: size > Int64(payload.count) && kind != .close,
                compressed: message.compressed ?? false, closeCode: message.closeCode.flatMap { Int(exactly: $0) },
                closeReason: closeReason))
        }
        return captured
    }

    /// `_forwarded`: mapped as an entry of its own (same checks, errors under
    /// `log.entries[N]._forwarded`), then kept as the flow's origin side. A body equal to the
    /// client's is the client's (nil), as the capture stores it.
    private func mapOriginSide(_ forwarded: HARInput.Forwarded, into flow: inout Flow) throws(HARImportError) {
        var side = entry
        side.forwarded = nil
        side.comment = nil
        side.request = forwarded.request ?? entry.request
        side.response = forwarded.response ?? entry.response
        var mapper = HARFlowMapper(entry: side, path: "\(path)._forwarded", bodyLimit: bodyLimit)
        let origin = try mapper.flow()
        if forwarded.request != nil {
            flow.forwardedRequest = ForwardedRequest(
                method: origin.method, scheme: origin.scheme, host: origin.host, port: origin.port, path: origin.path,
                headers: origin.requestHeaders, body: origin.requestBody == flow.requestBody ? nil : origin.requestBody)
        }
        if forwarded.response != nil, let status = origin.status {
            flow.originResponse = OriginResponse(
                status: status, reason: origin.reason, headers: origin.responseHeaders,
                body: origin.responseBody == flow.responseBody ? nil : origin.responseBody)
        }
    }

    /// Ten years in milliseconds: no exchange, and no HAR tool's figure, lasts longer; beyond it a
    /// number is garbage (and `1e20` would overflow the store's epoch milliseconds).
    static let longestDurationMilliseconds = 10 * 366 * 86_400_000.0

    /// A HAR duration in milliseconds (negative means "not applicable" and is passed on).
    private func duration(_ value: Double?, field: String) throws(HARImportError) -> Double? {
        guard let value else { return nil }
        guard value.isFinite, value <= Self.longestDurationMilliseconds else {
            throw failure(field, "\(value) is not a duration in milliseconds")
        }
        return value
    }

    private func checkTimings() throws(HARImportError) {
        guard let timings = entry.timings else { return }
        let phases = [("dns", timings.dns), ("connect", timings.connect), ("ssl", timings.ssl),
                      ("send", timings.send), ("wait", timings.wait), ("receive", timings.receive), ("_hold", timings.hold)]
        for (name, value) in phases { _ = try duration(value, field: "timings.\(name)") }
    }

    /// Versions, header names and values, the status text: text a raw export or a replay writes
    /// into the request or status line and the header block. (Response header values may hold a
    /// LF: exporters fold repeated `Set-Cookie` headers into one value that way.)
    private func checkVersionsAndHeaders() throws(HARImportError) {
        let request = entry.request
        if let problem = HARFieldCheck.lineText(request.httpVersion) { throw failure("request.httpVersion", problem) }
        try checkHeaders(request.headers, field: "request.headers", inRequest: true)
        guard let response = entry.response else { return }
        if let problem = HARFieldCheck.lineText(response.httpVersion) { throw failure("response.httpVersion", problem) }
        if let problem = HARFieldCheck.lineText(response.statusText) { throw failure("response.statusText", problem) }
        try checkHeaders(response.headers, field: "response.headers", inRequest: false)
    }

    private func checkHeaders(_ headers: [HARInput.NameValue]?, field: String, inRequest: Bool) throws(HARImportError) {
        for (index, header) in (headers ?? []).enumerated() {
            if let problem = HARFieldCheck.headerName(header.name) { throw failure("\(field)[\(index)].name", problem) }
            if let problem = HARFieldCheck.headerValue(header.value ?? "", inRequest: inRequest) {
                throw failure("\(field)[\(index)].value", problem)
            }
        }
    }

    private func urlParts(_ url: String, tunnel: Bool) throws(HARImportError) -> HARURLParts {
        do {
            return try HARURLParts.parse(url, authorityOnly: tunnel)
        } catch {
            switch error {
            case .notAURL:
                throw failure("request.url", "not an absolute URL: '\(url)'")
            case .unsupportedScheme(let scheme):
                throw failure("request.url", "unsupported URL scheme '\(scheme)' (http, https, ws and wss can be imported)")
            case .badPort(let port):
                throw failure("request.url", port.isEmpty ? "no port in '\(url)'" : "bad port '\(port)' in '\(url)'")
            }
        }
    }

    private mutating func requestBody(_ request: HARInput.Request, headers: [HeaderField]) throws(HARImportError)
        -> CapturedBody
    {
        guard let postData = request.postData else { return Self.emptyBody(size: request.bodySize) }
        var decoded = try bytes(text: postData.text, encoding: postData.encoding, field: "request.postData")
        if decoded == nil, let params = postData.params, !params.isEmpty {
            let form = Array(HARFormEncoding.encode(params.map { ($0.name, $0.value ?? "") }).utf8)
            decoded = (Array(form.prefix(bodyLimit)), Int64(form.count))
        }
        return body(decoded, contentEncoding: headers.first(named: "Content-Encoding"), bodySize: request.bodySize,
                    side: "request")
    }

    private mutating func mapResponse(into flow: inout Flow) throws(HARImportError) {
        guard let response = entry.response else { return }
        if let status = response.status, status != 0 {
            guard status == status.rounded(), (100...999).contains(status) else {
                throw failure("response.status", "not an HTTP status code: \(status)")
            }
            flow.status = Int(status)
            flow.reason = response.statusText.flatMap { $0.isEmpty ? nil : $0 }
            flow.responseHeaders = Self.headers(response.headers)
            let content = response.content
            let decoded = try bytes(text: content?.text, encoding: content?.encoding, field: "response.content")
            flow.responseBody = body(decoded, contentEncoding: flow.responseHeaders.first(named: "Content-Encoding"),
                                     bodySize: response.bodySize, side: "response")
        }
        let failed = flow.status == nil ? (response.comment ?? entry.comment) : nil
        flow.error = [entry.error, response.error, failed].compactMap { $0 }.first { !$0.isEmpty }
    }

    private func bytes(text: HARBodyText?, encoding: String?, field: String) throws(HARImportError) -> HARBodyRestorer.Decoded? {
        do {
            return try HARBodyRestorer.decodedBytes(text: text, encoding: encoding)
        } catch {
            switch error {
            case .badBase64:
                throw failure("\(field).text", "encoding is base64 but the text is not valid base64")
            case .unsupportedEncoding(let name):
                throw failure("\(field).encoding", "unsupported encoding '\(name)' (base64 or none)")
            }
        }
    }

    /// The stored body: re-encoded per `Content-Encoding`; `size` is the HAR's `bodySize` (bytes
    /// on the wire) when it knows it, never less than the bytes held. A body the HAR left out
    /// but says had bytes is truncated, and so is one our export marked truncated, and one
    /// longer than the import's limit (its first `bodyLimit` decoded bytes are kept; without a
    /// `bodySize`, its size is the decoded length).
    private mutating func body(_ decoded: HARBodyRestorer.Decoded?, contentEncoding: String?, bodySize: Double?,
                               side: String) -> CapturedBody
    {
        guard let decoded else { return Self.emptyBody(size: bodySize) }
        let (stored, note) = HARBodyRestorer.storedBytes(decoded.bytes, contentEncoding: contentEncoding, side: side,
                                                         rawAlready: remarks.isStoredRaw(side))
        if let note { notes.append(note) }
        let cut = decoded.size > Int64(decoded.bytes.count)
        if cut {
            notes.append("\(side) body truncated on import: kept \(decoded.bytes.count) of \(decoded.size) bytes (--max-body-size)")
        }
        let wireSize = bodySize.map { Self.count($0) } ?? 0
        let size = max(Int64(stored.count), wireSize > 0 ? wireSize : cut ? decoded.size : 0)
        return CapturedBody(bytes: Data(stored), size: size, truncated: cut || remarks.isTruncated(side) && size > stored.count)
    }

    private static func emptyBody(size: Double?) -> CapturedBody {
        let size = size.map(count) ?? 0
        return CapturedBody(bytes: Data(), size: size, truncated: size > 0)
    }

    private func tlsDetails() throws(HARImportError) -> TLSDetails? {
        guard let tls = entry.tls else { return nil }
        var details = TLSDetails(
            clientVersion: tls.clientVersion, clientCipher: tls.clientCipher, alpn: tls.alpn, sni: tls.sni,
            upstreamVersion: tls.upstreamVersion, upstreamCipher: tls.upstreamCipher,
            upstreamSubject: tls.upstreamSubject, upstreamIssuer: tls.upstreamIssuer)
        if let notAfter = tls.upstreamNotAfter {
            guard let date = ISO8601Timestamp.parse(notAfter) else {
                throw failure("_tls.upstreamNotAfter", "not an ISO 8601 date and time: '\(notAfter)'")
            }
            details.upstreamNotAfter = date
        }
        return details.isEmpty ? nil : details
    }

    private static func headers(_ headers: [HARInput.NameValue]?) -> [HeaderField] {
        (headers ?? []).map { HeaderField(name: $0.name, value: $0.value ?? "") }
    }

    /// A non-negative whole count from a JSON number; -1 ("unknown") and fractions become 0 / rounded down.
    private static func count(_ value: Double?) -> Int64 {
        guard let value, value.isFinite, value > 0 else { return 0 }
        return Int64(min(value, Double(Int64.max / 2)))
    }

    /// `[2606:4700::1]` → `2606:4700::1`; empty → nil.
    private static func unbracketed(_ address: String) -> String? {
        var text = Substring(address)
        if text.hasPrefix("[") && text.hasSuffix("]") { text = text.dropFirst().dropLast() }
        return text.isEmpty ? nil : String(text)
    }

    /// `connection` is a client address only when it reads `ipv4:port` or `[ipv6]:port`
    /// (Chrome's is a bare port or connection number).
    private static func clientAddress(_ connection: String) -> String? {
        guard let colon = connection.lastIndex(of: ":") else { return nil }
        let host = connection[..<colon]
        let port = connection[connection.index(after: colon)...]
        guard !port.isEmpty, port.allSatisfy({ $0.isASCII && $0.isNumber }), let number = Int(port), number <= 65_535 else {
            return nil
        }
        let isIPv4 = host.split(separator: ".", omittingEmptySubsequences: false).count == 4
            && host.allSatisfy { $0 == "." || ($0.isASCII && $0.isNumber) }
        let isIPv6 = host.hasPrefix("[") && host.hasSuffix("]") && host.count > 2
            && host.dropFirst().dropLast().allSatisfy { $0 == ":" || $0 == "." || $0.isHexDigit }
        return isIPv4 || isIPv6 ? connection : nil
    }
}
