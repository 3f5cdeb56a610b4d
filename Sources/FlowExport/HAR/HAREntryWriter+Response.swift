import ProxyModel

/// The entry's `response` object; a flow that got no response still gets a valid one (status 0).
extension HAREntryWriter {
    func writeResponse(_ flow: Flow, body: HARBodyContent?) {
        json.beginObject()
        guard let status = flow.status, let body else {
            writeMissingResponse(flow)
            return
        }
        let reason = flow.reason ?? ""
        json.key("status"); json.integer(status)
        json.key("statusText"); json.string(reason)
        json.key("httpVersion"); json.string(Self.harVersion(flow.httpVersion))
        json.key("headers"); writeHeaders(flow.responseHeaders)
        json.key("cookies"); writeResponseCookies(flow)
        json.key("content"); writeContent(body)
        json.key("redirectURL"); json.string(flow.responseHeaders.first(named: "Location") ?? "")
        json.key("headersSize")
        json.integer(Self.headSize(startLine: [flow.httpVersion, String(status), reason], version: flow.httpVersion,
                                   headers: flow.responseHeaders))
        json.key("bodySize"); json.integer(max(flow.responseBody.size, 0))
        json.endObject()
    }

    private func writeMissingResponse(_ flow: Flow) {
        json.key("status"); json.integer(0)
        json.key("statusText"); json.string("")
        json.key("httpVersion"); json.string(Self.harVersion(flow.httpVersion))
        json.key("headers"); json.beginArray(); json.endArray()
        json.key("cookies"); json.beginArray(); json.endArray()
        json.key("content")
        json.beginObject()
        json.key("size"); json.integer(0)
        json.key("mimeType"); json.string("x-unknown")
        json.endObject()
        json.key("redirectURL"); json.string("")
        json.key("headersSize"); json.integer(-1)
        json.key("bodySize"); json.integer(-1)
        json.endObject()
    }

    private func writeContent(_ body: HARBodyContent) {
        json.beginObject()
        json.key("size"); json.integer(body.size)
        if let compression = body.compression {
            json.key("compression"); json.integer(compression)
        }
        json.key("mimeType"); json.string(body.mimeType)
        switch body.representation {
        case .none:
            break
        case .text(let bytes):
            json.key("text"); json.string(utf8: bytes)
        case .base64(let bytes):
            json.key("text"); json.base64String(bytes)
            json.key("encoding"); json.string("base64")
        }
        json.endObject()
    }

    private func writeResponseCookies(_ flow: Flow) {
        json.beginArray()
        let headers = flow.responseHeaders.filter { $0.name.equalsIgnoringASCIICase("set-cookie") }
        for cookie in headers.flatMap({ HARCookie.responseCookies($0.value, received: flow.startedAt) }) {
            json.beginObject()
            json.key("name"); json.string(cookie.name)
            json.key("value"); json.string(cookie.value)
            if let path = cookie.path { json.key("path"); json.string(path) }
            if let domain = cookie.domain { json.key("domain"); json.string(domain) }
            if let expires = cookie.expires { json.key("expires"); json.date(expires) }
            json.key("httpOnly"); json.bool(cookie.httpOnly)
            json.key("secure"); json.bool(cookie.secure)
            if let sameSite = cookie.sameSite { json.key("_sameSite"); json.string(sameSite) }
            json.endObject()
        }
        json.endArray()
    }
}
