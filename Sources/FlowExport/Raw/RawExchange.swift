import Foundation
import ProxyModel

/// A flow as HTTP/1.1 bytes on the wire (`proxyapp export --raw ID`): the request, a blank line,
/// the response.
///
/// It exists for the moments a formatted view hides something (header order, spacing, a stray
/// byte): it shows exactly what was recorded. Bodies are the captured bytes, still
/// content-encoded. HTTP/2 exchanges (imported from a browser) are written in HTTP/1.1 form:
/// pseudo-headers dropped, `Host` from `:authority`.
public enum RawExchange {
    private static let crlf: [UInt8] = [13, 10]

    public static func render(_ flow: Flow) -> [UInt8] {
        let version = version(flow)
        var output = request(flow)
        if output.last != 10 { output += crlf }
        output += crlf
        guard let status = flow.status else {
            output += line(flow.error.map { "(no response: \($0))" } ?? "(no response)")
            if flow.kind == .tunnel {
                output += line("(tunnel: \(flow.bytesUp) bytes up, \(flow.bytesDown) bytes down, not decrypted)")
            }
            return output
        }
        output += line("\(version) \(status) \(flow.reason ?? "")")
        output += headerBlock(flow.responseHeaders.filter { !$0.name.hasPrefix(":") })
        output += body(flow.responseBody)
        return output
    }

    /// The request alone (the TUI's `y r` copies it): request line, headers, blank line, body.
    public static func request(_ flow: Flow) -> [UInt8] {
        line("\(flow.method) \(requestTarget(flow)) \(version(flow))") + headerBlock(requestHeaders(flow)) + body(flow.requestBody)
    }

    private static func version(_ flow: Flow) -> String {
        flow.httpVersion.uppercased().hasPrefix("HTTP/1") ? flow.httpVersion : "HTTP/1.1"
    }

    /// Origin-form (`/path?q`), or `host:port` for CONNECT.
    private static func requestTarget(_ flow: Flow) -> String {
        if flow.kind == .tunnel || flow.method.uppercased() == "CONNECT" {
            return "\(flow.urlHost):\(flow.port)"
        }
        return flow.path.isEmpty ? "/" : flow.path
    }

    /// The recorded headers; an HTTP/2 request's pseudo-headers give way to a `Host` line.
    private static func requestHeaders(_ flow: Flow) -> [HeaderField] {
        let pseudo = flow.requestHeaders.filter { $0.name.hasPrefix(":") }
        guard !pseudo.isEmpty else { return flow.requestHeaders }
        var headers = flow.requestHeaders.filter { !$0.name.hasPrefix(":") }
        if headers.first(named: "Host") == nil, let authority = pseudo.first(named: ":authority") {
            headers.insert(HeaderField(name: "Host", value: authority), at: 0)
        }
        return headers
    }

    /// One line per header; a value folded over several lines (an imported HAR's `Set-Cookie`)
    /// is one line per part under the same name, never a line that reads as another header.
    private static func headerBlock(_ headers: [HeaderField]) -> [UInt8] {
        headers.flatMap { header -> [UInt8] in
            let name = Array("\(header.name): ".utf8)
            return Array(header.value.utf8).split(separator: 10, omittingEmptySubsequences: false).flatMap { part in
                name + (part.last == 13 ? part.dropLast() : part) + crlf
            }
        } + crlf
    }

    private static func body(_ body: CapturedBody) -> [UInt8] {
        var bytes = [UInt8](body.bytes)
        if body.truncated {
            if !bytes.isEmpty { bytes += crlf }
            bytes += line("(body truncated: \(body.bytes.count) of \(body.size) bytes captured)")
        }
        return bytes
    }

    private static func line(_ text: String) -> [UInt8] {
        Array(text.utf8) + crlf
    }
}
