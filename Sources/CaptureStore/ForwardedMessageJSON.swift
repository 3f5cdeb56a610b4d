import Foundation
import ProxyModel

/// Converts a flow's origin side (`Flow.forwardedRequest`, `Flow.originResponse`) to and from
/// the `forwarded_request` and `origin_response` columns (schema v7).
///
/// Each is the header JSON of `HeaderFieldsJSON` with HTTP/2-style pseudo-fields first
/// (`:method`, `:scheme`, `:host`, `:port`, `:path`; `:status`, `:reason`), then the headers
/// as forwarded or received. A changed body adds `:body-size` and `:body-truncated` (its bytes
/// are in the matching BLOB column); without them the body was the client's. No header name
/// can start with `:`, so the two never mix. NULL (most flows) means no rule changed that
/// message. A malformed value reads as nil, never an error: the flow stays readable.
package enum ForwardedMessageJSON {
    package static func encode(_ request: ForwardedRequest?) -> String? {
        guard let request else { return nil }
        var fields = [
            HeaderField(name: ":method", value: request.method), HeaderField(name: ":scheme", value: request.scheme),
            HeaderField(name: ":host", value: request.host), HeaderField(name: ":port", value: String(request.port)),
            HeaderField(name: ":path", value: request.path),
        ]
        fields += bodyFields(request.body)
        return HeaderFieldsJSON.encode(fields + request.headers)
    }

    package static func encode(_ response: OriginResponse?) -> String? {
        guard let response else { return nil }
        var fields = [HeaderField(name: ":status", value: String(response.status))]
        if let reason = response.reason { fields.append(HeaderField(name: ":reason", value: reason)) }
        fields += bodyFields(response.body)
        return HeaderFieldsJSON.encode(fields + response.headers)
    }

    package static func request(_ text: String?, body: Data?) -> ForwardedRequest? {
        guard let (pseudo, headers) = split(text), let method = pseudo[":method"], let scheme = pseudo[":scheme"],
              let host = pseudo[":host"], let port = pseudo[":port"].flatMap({ Int($0) }), let path = pseudo[":path"]
        else { return nil }
        return ForwardedRequest(method: method, scheme: scheme, host: host, port: port, path: path, headers: headers,
                                body: capturedBody(pseudo, bytes: body))
    }

    package static func response(_ text: String?, body: Data?) -> OriginResponse? {
        guard let (pseudo, headers) = split(text), let status = pseudo[":status"].flatMap({ Int($0) }) else { return nil }
        return OriginResponse(status: status, reason: pseudo[":reason"], headers: headers,
                              body: capturedBody(pseudo, bytes: body))
    }

    /// The BLOB column's bytes: the changed body's, else nothing (NULL).
    package static func bodyBytes(_ body: CapturedBody?) -> Data {
        body?.bytes ?? Data()
    }

    private static func bodyFields(_ body: CapturedBody?) -> [HeaderField] {
        guard let body else { return [] }
        return [HeaderField(name: ":body-size", value: String(body.size)),
                HeaderField(name: ":body-truncated", value: body.truncated ? "1" : "0")]
    }

    private static func capturedBody(_ pseudo: [String: String], bytes: Data?) -> CapturedBody? {
        guard let size = pseudo[":body-size"].flatMap({ Int64($0) }) else { return nil }
        let bytes = bytes ?? Data()
        return CapturedBody(bytes: bytes, size: max(size, Int64(bytes.count)), truncated: pseudo[":body-truncated"] == "1")
    }

    /// The pseudo-fields (first of each name) and the headers after them.
    private static func split(_ text: String?) -> ([String: String], [HeaderField])? {
        guard let text, let fields = try? HeaderFieldsJSON.decode(text) else { return nil }
        var pseudo: [String: String] = [:]
        var headers: [HeaderField] = []
        for field in fields {
            if field.name.hasPrefix(":") {
                if pseudo[field.name] == nil { pseudo[field.name] = field.value }
            } else {
                headers.append(field)
            }
        }
        return (pseudo, headers)
    }
}
