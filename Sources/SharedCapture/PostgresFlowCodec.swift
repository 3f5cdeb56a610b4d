import CaptureStore
import Foundation
import PostgresNIO
import ProxyModel

/// A `Flow` as a row of `proxyapp_flows`: the columns, the binds of an insert and the decoding
/// of a row, with the SQLite capture's conventions (epoch milliseconds, header lists as JSON
/// text, bodies as the captured raw prefix beside their full size and a truncated flag).
///
/// Bodies are stored inline (`bytea`) whatever their size: PostgreSQL keeps large values out
/// of line itself (TOAST), and there is no directory shared by every proxy for body files. A
/// body spooled to a file while its exchange ran is read back from the spool here.
enum PostgresFlowCodec {
    /// The columns an insert sets, in bind order; `id` is the server's.
    static let insertColumns = [
        "proxy", "kind", "client_address", "started_at", "finished_at",
        "dns_ms", "connect_ms", "tls_ms", "send_ms", "wait_ms", "receive_ms", "hold_ms",
        "method", "scheme", "host", "port", "path", "http_version", "status", "reason", "error",
        "bytes_up", "bytes_down", "marked",
        "request_body_size", "request_body_truncated", "response_body_size", "response_body_truncated",
        "request_headers", "response_headers", "note",
        "tls_client_version", "tls_client_cipher", "tls_alpn", "tls_sni", "tls_upstream_version",
        "tls_upstream_cipher", "tls_upstream_subject", "tls_upstream_issuer", "tls_upstream_not_after",
        "server_address", "rules", "forwarded_request", "origin_response", "response_trailers",
        "stream_id", "message_count", "replay_of",
        "request_body", "response_body", "forwarded_request_body", "origin_response_body",
    ]

    /// What a read selects: the id, then the insert's columns in the same order.
    static let selectColumns = "id, " + insertColumns.joined(separator: ", ")

    /// Appends the binds of one row, in `insertColumns` order.
    static func bind(_ flow: Flow, proxy: String, into binds: inout PostgresBindings) {
        binds.append(text(proxy))
        binds.append(flow.kind.rawValue)
        binds.append(text(flow.clientAddress))
        binds.append(CaptureTime.milliseconds(flow.startedAt))
        binds.append(flow.finishedAt.map(CaptureTime.milliseconds))
        let timings = flow.timings
        for value in [timings.dns, timings.connect, timings.tls, timings.send, timings.wait, timings.receive, timings.hold] {
            binds.append(value.isFinite ? value : -1)
        }
        binds.append(text(flow.method))
        binds.append(text(flow.scheme))
        binds.append(text(flow.host))
        binds.append(Int64(flow.port))
        binds.append(text(flow.path))
        binds.append(text(flow.httpVersion))
        binds.append(flow.status.map(Int64.init))
        binds.append(text(flow.reason))
        binds.append(text(flow.error))
        binds.append(flow.bytesUp)
        binds.append(flow.bytesDown)
        binds.append(flow.marked)
        binds.append(flow.requestBody.size)
        binds.append(flow.requestBody.truncated)
        binds.append(flow.responseBody.size)
        binds.append(flow.responseBody.truncated)
        binds.append(HeaderFieldsJSON.encode(flow.requestHeaders))
        binds.append(HeaderFieldsJSON.encode(flow.responseHeaders))
        binds.append(text(flow.note))
        let tls = flow.tls
        for value in [tls?.clientVersion, tls?.clientCipher, tls?.alpn, tls?.sni, tls?.upstreamVersion,
                      tls?.upstreamCipher, tls?.upstreamSubject, tls?.upstreamIssuer] {
            binds.append(text(value))
        }
        binds.append(tls?.upstreamNotAfter.map(CaptureTime.milliseconds))
        binds.append(text(flow.serverAddress))
        binds.append(AppliedRulesJSON.encode(flow.appliedRules))
        binds.append(ForwardedMessageJSON.encode(flow.forwardedRequest))
        binds.append(ForwardedMessageJSON.encode(flow.originResponse))
        binds.append(flow.responseTrailers.isEmpty ? nil : HeaderFieldsJSON.encode(flow.responseTrailers))
        binds.append(flow.streamID.map(Int64.init))
        binds.append(Int64(flow.messageCount))
        binds.append(flow.replayOf)
        for body in [flow.requestBody, flow.responseBody, flow.forwardedRequest?.body, flow.originResponse?.body] {
            binds.append(bytes(body))
        }
    }

    /// PostgreSQL's text cannot hold U+0000, which a header or a path may carry: it becomes
    /// U+FFFD (the JSON columns escape it instead).
    static func text(_ value: String?) -> String? {
        guard let value else { return nil }
        return text(value)
    }

    static func text(_ value: String) -> String {
        guard value.utf8.contains(0) else { return value }
        return value.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}")
    }

    /// A body's captured bytes for a `bytea` column (read from its spool when spooled); nil
    /// (NULL) when none were captured.
    private static func bytes(_ body: CapturedBody?) -> ByteBuffer? {
        guard let body, body.storedCount > 0 else { return nil }
        return ByteBuffer(data: body.bytes)
    }

    /// The flow of a row read with `selectColumns`, `proxyName` set.
    static func flow(from row: PostgresRow) throws -> Flow {
        let cells = row.makeRandomAccess()
        var index = 0
        func next<T: PostgresDecodable>(_ type: T.Type = T.self) throws -> T {
            defer { index += 1 }
            do {
                return try cells[index].decode(T.self)
            } catch {
                throw SharedCaptureError.malformedRow("column \(cells[index].columnName) is not a \(T.self)")
            }
        }
        let id: Int64 = try next()
        let proxy: String = try next()
        let kindText: String = try next()
        guard let kind = FlowKind(rawValue: kindText) else {
            throw SharedCaptureError.malformedRow("unknown flow kind \(kindText)")
        }
        let clientAddress: String = try next()
        let startedAt: Int64 = try next()
        let finishedAt: Int64? = try next()
        let timings = FlowTimings(dns: try next(), connect: try next(), tls: try next(), send: try next(),
                                  wait: try next(), receive: try next(), hold: try next())
        let method: String = try next(), scheme: String = try next(), host: String = try next()
        let port: Int64 = try next()
        let path: String = try next(), httpVersion: String = try next()
        let status: Int64? = try next()
        let reason: String? = try next(), error: String? = try next()
        let bytesUp: Int64 = try next(), bytesDown: Int64 = try next()
        let marked: Bool = try next()
        let requestSize: Int64 = try next(), requestTruncated: Bool = try next()
        let responseSize: Int64 = try next(), responseTruncated: Bool = try next()
        let requestHeaders: String = try next(), responseHeaders: String = try next()
        let note: String? = try next()
        let tlsTexts: [String?] = try (0..<8).map { _ in try next(String?.self) }
        let notAfter: Int64? = try next()
        let serverAddress: String? = try next()
        let rules: String? = try next()
        let forwardedRequest: String? = try next(), originResponse: String? = try next()
        let trailers: String? = try next()
        let streamID: Int64? = try next(), messageCount: Int64 = try next(), replayOf: Int64? = try next()
        let bodies: [Data?] = try (0..<4).map { _ in try next(ByteBuffer?.self).map { Data(buffer: $0) } }
        let tls = TLSDetails(
            clientVersion: tlsTexts[0], clientCipher: tlsTexts[1], alpn: tlsTexts[2], sni: tlsTexts[3],
            upstreamVersion: tlsTexts[4], upstreamCipher: tlsTexts[5], upstreamSubject: tlsTexts[6],
            upstreamIssuer: tlsTexts[7], upstreamNotAfter: notAfter.map(CaptureTime.date(milliseconds:)))
        var flow = Flow(
            id: id, kind: kind, clientAddress: clientAddress,
            startedAt: CaptureTime.date(milliseconds: startedAt),
            finishedAt: finishedAt.map(CaptureTime.date(milliseconds:)), timings: timings,
            method: method, scheme: scheme, host: host, port: Int(port), path: path, httpVersion: httpVersion,
            requestHeaders: try headers(requestHeaders),
            requestBody: CapturedBody(bytes: bodies[0] ?? Data(), size: requestSize, truncated: requestTruncated),
            status: status.map(Int.init), reason: reason,
            responseHeaders: try headers(responseHeaders),
            responseBody: CapturedBody(bytes: bodies[1] ?? Data(), size: responseSize, truncated: responseTruncated),
            error: error, bytesUp: bytesUp, bytesDown: bytesDown, marked: marked,
            tls: tls.isEmpty ? nil : tls, note: note, serverAddress: serverAddress,
            appliedRules: AppliedRulesJSON.decode(rules),
            forwardedRequest: ForwardedMessageJSON.request(forwardedRequest, body: bodies[2]),
            originResponse: ForwardedMessageJSON.response(originResponse, body: bodies[3]),
            responseTrailers: trailers.flatMap { try? HeaderFieldsJSON.decode($0) } ?? [],
            streamID: streamID.map(Int.init), messageCount: Int(messageCount), replayOf: replayOf)
        flow.proxyName = proxy
        return flow
    }

    private static func headers(_ json: String) throws -> [HeaderField] {
        do {
            return try HeaderFieldsJSON.decode(json)
        } catch {
            throw SharedCaptureError.malformedRow("a header list is not the JSON the capture writes")
        }
    }
}
