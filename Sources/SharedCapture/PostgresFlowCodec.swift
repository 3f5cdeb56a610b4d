import CaptureStore
import Foundation
import PostgresNIO
import ProxyModel

/// A `Flow` as a row of `proxyapp_flows`: the columns, the text of a `COPY` and the decoding
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

    /// The same without the bodies (NULL in their place): what a listing or a filter that
    /// reads no body needs, a fraction of the bytes.
    static let selectColumnsWithoutBodies = "id, " + insertColumns.map { column in
        column.hasSuffix("_body") ? "NULL::bytea AS \(column)" : column
    }.joined(separator: ", ")

    /// One column's value of a row, before it is written as `COPY … FROM STDIN` text
    /// (`appendCopyText`).
    enum Value {
        case text(String?)
        case integer(Int64?)
        case real(Double)
        case boolean(Bool)
        case bytes(CapturedBody?)
    }

    /// The row's values, in `insertColumns` order.
    static func values(_ flow: Flow, proxy: String) -> [Value] {
        let timings = flow.timings
        let tls = flow.tls
        var values: [Value] = [
            .text(proxy), .text(flow.kind.rawValue), .text(flow.clientAddress),
            .integer(CaptureTime.milliseconds(flow.startedAt)), .integer(flow.finishedAt.map(CaptureTime.milliseconds)),
        ]
        for value in [timings.dns, timings.connect, timings.tls, timings.send, timings.wait, timings.receive, timings.hold] {
            values.append(.real(value.isFinite ? value : -1))
        }
        values += [
            .text(flow.method), .text(flow.scheme), .text(flow.host), .integer(Int64(flow.port)), .text(flow.path),
            .text(flow.httpVersion), .integer(flow.status.map(Int64.init)), .text(flow.reason), .text(flow.error),
            .integer(flow.bytesUp), .integer(flow.bytesDown), .boolean(flow.marked),
            .integer(flow.requestBody.size), .boolean(flow.requestBody.truncated),
            .integer(flow.responseBody.size), .boolean(flow.responseBody.truncated),
            .text(HeaderFieldsJSON.encode(flow.requestHeaders)), .text(HeaderFieldsJSON.encode(flow.responseHeaders)),
            .text(flow.note),
        ]
        for value in [tls?.clientVersion, tls?.clientCipher, tls?.alpn, tls?.sni, tls?.upstreamVersion,
                      tls?.upstreamCipher, tls?.upstreamSubject, tls?.upstreamIssuer] {
            values.append(.text(value))
        }
        values += [
            .integer(tls?.upstreamNotAfter.map(CaptureTime.milliseconds)), .text(flow.serverAddress),
            .text(AppliedRulesJSON.encode(flow.appliedRules)), .text(ForwardedMessageJSON.encode(flow.forwardedRequest)),
            .text(ForwardedMessageJSON.encode(flow.originResponse)),
            .text(flow.responseTrailers.isEmpty ? nil : HeaderFieldsJSON.encode(flow.responseTrailers)),
            .integer(flow.streamID.map(Int64.init)), .integer(Int64(flow.messageCount)), .integer(flow.replayOf),
            .bytes(flow.requestBody), .bytes(flow.responseBody), .bytes(flow.forwardedRequest?.body),
            .bytes(flow.originResponse?.body),
        ]
        return values
    }

    /// Appends one row of `COPY … FROM STDIN` text: `id`, then `insertColumns`, tab-separated,
    /// `\N` for NULL, backslash, tab, newline and carriage return escaped, `bytea` as `\\x`
    /// and hex.
    static func appendCopyText(_ flow: Flow, id: Int64, proxy: String, to buffer: inout ByteBuffer) {
        buffer.writeString(String(id))
        for value in values(flow, proxy: proxy) {
            buffer.writeInteger(UInt8(ascii: "\t"))
            switch value {
            case .text(nil), .integer(nil):
                buffer.writeStaticString("\\N")
            case .text(let text?):
                appendEscaped(Self.text(text), to: &buffer)
            case .integer(let number?):
                buffer.writeString(String(number))
            case .real(let number):
                buffer.writeString(String(number))
            case .boolean(let flag):
                buffer.writeInteger(UInt8(ascii: flag ? "t" : "f"))
            case .bytes(let body):
                guard let body, body.storedCount > 0 else {
                    buffer.writeStaticString("\\N")
                    continue
                }
                buffer.writeStaticString("\\\\x")
                appendHex(body.bytes, to: &buffer)
            }
        }
        buffer.writeInteger(UInt8(ascii: "\n"))
    }

    private static func appendEscaped(_ text: String, to buffer: inout ByteBuffer) {
        var text = text
        text.withUTF8 { bytes in
            var start = 0
            for index in bytes.indices {
                let escaped: UInt8
                switch bytes[index] {
                case UInt8(ascii: "\\"): escaped = UInt8(ascii: "\\")
                case UInt8(ascii: "\t"): escaped = UInt8(ascii: "t")
                case UInt8(ascii: "\n"): escaped = UInt8(ascii: "n")
                case UInt8(ascii: "\r"): escaped = UInt8(ascii: "r")
                default: continue
                }
                buffer.writeBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[start..<index]))
                buffer.writeInteger(UInt8(ascii: "\\"))
                buffer.writeInteger(escaped)
                start = index + 1
            }
            buffer.writeBytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(bytes)[start...]))
        }
    }

    private static let hexDigits = Array("0123456789abcdef".utf8)

    private static func appendHex(_ data: Data, to buffer: inout ByteBuffer) {
        buffer.reserveCapacity(minimumWritableBytes: data.count * 2)
        data.withUnsafeBytes { bytes in
            _ = buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: bytes.count * 2) { target in
                for (index, byte) in bytes.enumerated() {
                    target[index * 2] = hexDigits[Int(byte >> 4)]
                    target[index * 2 + 1] = hexDigits[Int(byte & 0x0F)]
                }
                return bytes.count * 2
            }
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

    /// A WebSocket message of a row of `proxyapp_messages` (direction, time, kind, size,
    /// truncated, compressed, close_code, close_reason, payload); nil for a row no version of
    /// ProxyApp writes, so one hand-edited row never hides the others.
    static func message(from row: PostgresRow) throws -> CapturedMessage? {
        guard let (directionText, time, kindText, size, truncated, compressed, closeCode, closeReason, payload) = try? row.decode(
            (String, Int64, String, Int64, Bool, Bool, Int64?, String?, ByteBuffer?).self),
            let direction = CapturedMessage.Direction(rawValue: directionText),
            let kind = CapturedMessage.Kind(rawValue: kindText)
        else { return nil }
        return CapturedMessage(
            direction: direction, time: CaptureTime.date(milliseconds: time), kind: kind,
            payload: payload.map { Data(buffer: $0) } ?? Data(), size: size, truncated: truncated,
            compressed: compressed, closeCode: closeCode.map(Int.init), closeReason: closeReason)
    }

    private static func headers(_ json: String) throws -> [HeaderField] {
        do {
            return try HeaderFieldsJSON.decode(json)
        } catch {
            throw SharedCaptureError.malformedRow("a header list is not the JSON the capture writes")
        }
    }
}
