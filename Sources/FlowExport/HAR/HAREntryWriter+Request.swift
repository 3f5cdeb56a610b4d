import ProxyModel

/// The entry's `request` object.
extension HAREntryWriter {
    func writeRequest(_ flow: Flow, body: HARBodyContent?) {
        let isTunnel = flow.kind == .tunnel
        let target = isTunnel ? Self.authority(flow) : flow.path
        json.beginObject()
        json.key("method"); json.string(flow.method)
        json.key("url"); json.string(isTunnel ? "\(flow.scheme == "udp" ? "udp" : "https")://\(Self.authority(flow))" : flow.url)
        json.key("httpVersion"); json.string(Self.harVersion(flow.httpVersion))
        json.key("headers"); writeHeaders(flow.requestHeaders)
        json.key("queryString")
        let query = isTunnel ? nil : URLEncodedPairs.query(ofPath: flow.path)
        writeNameValueList(query.map { URLEncodedPairs($0).decoded } ?? [])
        json.key("cookies"); writeRequestCookies(flow.requestHeaders)
        if let body, flow.requestBody.size > 0 || !flow.requestBody.bytes.isEmpty {
            json.key("postData"); writePostData(body)
        }
        json.key("headersSize")
        json.integer(Self.headSize(startLine: [flow.method, target, flow.httpVersion], version: flow.httpVersion,
                                   headers: flow.requestHeaders))
        json.key("bodySize"); json.integer(max(flow.requestBody.size, 0))
        json.endObject()
    }

    /// `host:port` (IPv6 in brackets), the CONNECT target.
    static func authority(_ flow: Flow) -> String {
        let host = flow.urlHost
        return "\(host):\(flow.port)"
    }

    private func writeRequestCookies(_ headers: [HeaderField]) {
        json.beginArray()
        for header in headers where header.name.equalsIgnoringASCIICase("cookie") {
            for cookie in HARCookie.requestCookies(header.value) {
                json.beginObject()
                json.key("name"); json.string(cookie.name)
                json.key("value"); json.string(cookie.value)
                json.endObject()
            }
        }
        json.endArray()
    }

    /// `mimeType` and `text`; URL-encoded forms add `params`; a binary body is base64 in `text`
    /// with `_encoding: "base64"` (HAR 1.2 has no encoding field for request bodies).
    private func writePostData(_ body: HARBodyContent) {
        json.beginObject()
        json.key("mimeType"); json.string(body.mimeType)
        switch body.representation {
        case .none:
            json.key("text"); json.string("")
        case .text(let bytes):
            if body.isFormText {
                json.key("params")
                writeNameValueList(URLEncodedPairs(Substring(decoding: bytes, as: UTF8.self)).decoded)
            }
            json.key("text"); json.string(utf8: bytes)
        case .base64(let bytes):
            json.key("text"); json.base64String(bytes)
            json.key("_encoding"); json.string("base64")
        }
        json.endObject()
    }
}
