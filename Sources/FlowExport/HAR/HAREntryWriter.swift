import Foundation
import ProxyModel

/// Writes one flow as one HAR 1.2 entry into a `JSONEmitter`: the entry's own fields, timings
/// and our `_`-prefixed extras here; the request and response objects in the two extensions.
///
/// It holds nothing between entries: an export's memory is one flow and its decoded bodies.
///
/// A tunnel is a CONNECT entry whose url is `https://host:port` (as Charles exports them; a
/// SOCKS5 UDP relay's is `udp://host:port`), so its byte counts and notes are not lost. Fields HAR 1.2 lacks are `_`-prefixed: cookie
/// `SameSite` is `_sameSite`, a `postData` in base64 says so in `_encoding`.
struct HAREntryWriter {
    let json: JSONEmitter
    let pageID: String

    func write(_ flow: Flow) {
        let timings = HARTimings(flow)
        let request = flow.kind == .tunnel ? nil : HARBodyContent(body: flow.requestBody, headers: flow.requestHeaders, side: "request")
        let response = flow.status == nil ? nil : HARBodyContent(body: flow.responseBody, headers: flow.responseHeaders, side: "response")
        var remarks: [String] = []
        if let error = flow.error { remarks.append(error) }
        remarks += request?.remarks ?? []
        remarks += response?.remarks ?? []

        json.beginObject()
        json.key("pageref"); json.string(pageID)
        json.key("startedDateTime"); json.date(flow.startedAt)
        json.key("time"); json.milliseconds(microseconds: timings.total)
        json.key("request"); writeRequest(flow, body: request)
        json.key("response"); writeResponse(flow, body: response)
        json.key("cache"); json.beginObject(); json.endObject()
        json.key("timings"); writeTimings(timings)
        if let server = flow.serverAddress, !server.isEmpty {
            json.key("serverIPAddress"); json.string(server)
        }
        if !flow.clientAddress.isEmpty {
            json.key("connection"); json.string(flow.clientAddress)
        }
        if !remarks.isEmpty {
            json.key("comment"); json.string(remarks.joined(separator: "; "))
        }
        writeExtras(flow)
        json.endObject()
    }

    private func writeTimings(_ timings: HARTimings) {
        json.beginObject()
        json.key("blocked"); json.milliseconds(microseconds: Self.written(timings.blocked))
        json.key("dns"); json.milliseconds(microseconds: Self.written(timings.dns))
        json.key("connect"); json.milliseconds(microseconds: Self.written(timings.connect))
        json.key("send"); json.milliseconds(microseconds: timings.send)
        json.key("wait"); json.milliseconds(microseconds: timings.wait)
        json.key("receive"); json.milliseconds(microseconds: timings.receive)
        json.key("ssl"); json.milliseconds(microseconds: Self.written(timings.ssl))
        if timings.blocked >= 0 {
            json.key("_hold"); json.milliseconds(microseconds: timings.blocked)
        }
        json.endObject()
    }

    /// -1 stays -1 ms (not -1 µs).
    private static func written(_ microseconds: Int64) -> Int64 {
        microseconds < 0 ? -1000 : microseconds
    }

    /// Our fields, all starting with `_` as HAR requires of custom fields.
    private func writeExtras(_ flow: Flow) {
        if let id = flow.id {
            json.key("_id"); json.integer(id)
        }
        json.key("_kind"); json.string(flow.kind.rawValue)
        if flow.marked {
            json.key("_marked"); json.bool(true)
        }
        if let error = flow.error {
            json.key("_error"); json.string(error)
        }
        if let note = flow.note {
            json.key("_note"); json.string(note)
        }
        if let original = flow.replayOf {
            json.key("_replayOf"); json.integer(original)
        }
        if let proxy = flow.proxyName {  // a shared capture's: which proxy captured it
            json.key("_proxy"); json.string(proxy)
        }
        if !flow.appliedRules.isEmpty {
            json.key("_rules")
            json.beginArray()
            for name in flow.appliedRules { json.string(name) }
            json.endArray()
        }
        if flow.kind == .tunnel {
            json.key("_bytesUp"); json.integer(flow.bytesUp)
            json.key("_bytesDown"); json.integer(flow.bytesDown)
        }
        if let tls = flow.tls, !tls.isEmpty {
            json.key("_tls"); writeTLS(tls)
        }
        if flow.hasOriginSide {
            json.key("_forwarded"); writeOriginSide(flow)
        }
        if let messages = flow.webSocketMessages, !messages.isEmpty {
            json.key("_webSocketMessages"); writeWebSocketMessages(messages)
        }
    }

    /// `_webSocketMessages` as Chrome writes it: `type` (`send`/`receive`), `time` (seconds since
    /// the epoch), `opcode`, `data` (text as text; binary, and text that is not UTF-8, in base64
    /// with `_encoding`); ours: a close's `_closeCode` (its reason is the data), `_size` when the
    /// payload was not kept whole, `_compressed`.
    private func writeWebSocketMessages(_ messages: [CapturedMessage]) {
        json.beginArray()
        for message in messages {
            json.beginObject()
            json.key("type"); json.string(message.direction.rawValue)
            // Milliseconds since the epoch, written as seconds with three decimals.
            json.key("time"); json.milliseconds(microseconds: Int64((message.time.timeIntervalSince1970 * 1000).rounded()))
            json.key("opcode"); json.integer(message.kind.opcode)
            let bytes = [UInt8](message.payload)
            json.key("data")
            if message.kind == .close {
                json.string(message.closeReason ?? "")
            } else if message.kind != .binary, UTF8Validation.isValid(bytes) {
                json.string(utf8: bytes)
            } else {
                var encoded: [UInt8] = []
                Base64.append(bytes[...], to: &encoded)
                json.string(utf8: encoded)
                json.key("_encoding"); json.string("base64")
            }
            if let code = message.closeCode {
                json.key("_closeCode"); json.integer(code)
            }
            if message.truncated || message.size != Int64(bytes.count) {
                json.key("_size"); json.integer(message.size)
            }
            if message.compressed {
                json.key("_compressed"); json.bool(true)
            }
            json.endObject()
        }
        json.endArray()
    }

    /// `_forwarded`: the request as forwarded to the origin and/or the response as the origin
    /// sent it, each only when a rule changed it, as complete HAR request and response objects
    /// (a body no rule changed is written again, so each object stands alone). The entry's own
    /// request and response stay the client's.
    private func writeOriginSide(_ flow: Flow) {
        let side = flow.originSide
        json.beginObject()
        if flow.forwardedRequest != nil {
            json.key("request")
            writeRequest(side, body: HARBodyContent(body: side.requestBody, headers: side.requestHeaders, side: "request"))
        }
        if flow.originResponse != nil {
            json.key("response")
            writeResponse(side, body: HARBodyContent(body: side.responseBody, headers: side.responseHeaders, side: "response"))
        }
        json.endObject()
    }

    private func writeTLS(_ tls: TLSDetails) {
        json.beginObject()
        let fields: [(StaticString, String?)] = [
            ("clientVersion", tls.clientVersion), ("clientCipher", tls.clientCipher), ("alpn", tls.alpn),
            ("sni", tls.sni), ("upstreamVersion", tls.upstreamVersion), ("upstreamCipher", tls.upstreamCipher),
            ("upstreamSubject", tls.upstreamSubject), ("upstreamIssuer", tls.upstreamIssuer),
        ]
        for case let (name, value?) in fields {
            json.key(name); json.string(value)
        }
        if let notAfter = tls.upstreamNotAfter {
            json.key("upstreamNotAfter"); json.date(notAfter)
        }
        json.endObject()
    }

    // MARK: Shared by request and response

    func writeHeaders(_ headers: [HeaderField]) {
        writeNameValueList(headers.lazy.map { (name: $0.name, value: $0.value) })
    }

    func writeNameValueList(_ pairs: some Sequence<(name: String, value: String)>) {
        json.beginArray()
        for pair in pairs {
            json.beginObject()
            json.key("name"); json.string(pair.name)
            json.key("value"); json.string(pair.value)
            json.endObject()
        }
        json.endArray()
    }

    /// Bytes of an HTTP/1.x head: the start line, `name: value` lines, the empty line; -1 for
    /// other versions (their heads are not text on the wire).
    /// A flow's version as Chrome writes it in a HAR: `http/2.0` for HTTP/2 (the importer reads
    /// that and `h2` back as `HTTP/2.0`); HTTP/1.x as captured.
    static func harVersion(_ version: String) -> String {
        version == "HTTP/2.0" ? "http/2.0" : version
    }

    static func headSize(startLine: [String], version: String, headers: [HeaderField]) -> Int {
        guard version.hasPrefix("HTTP/1.") || version == "HTTP/0.9" else { return -1 }
        var size = startLine.reduce(startLine.count - 1) { $0 + $1.utf8.count } + 2
        for header in headers {
            size += header.name.utf8.count + 2 + header.value.utf8.count + 2
        }
        return size + 2
    }
}
