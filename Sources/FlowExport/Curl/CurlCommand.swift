import Foundation
import ProxyModel

/// A curl command line that sends a captured request again (`proxyapp export --curl ID`).
///
/// It exists so a user can replay or tweak one request from a shell. The output is safe to paste
/// into any POSIX shell: every argument is single-quoted where needed and no control byte is
/// printed raw (`ShellQuoting`), URLs are not globbed (`--globoff`), and header names that are
/// not HTTP tokens (`@file` would make curl read a file) are left out, as a leading comment says.
/// What curl would add on its own (`User-Agent`, `Accept`, a form `Content-Type` for a body) is
/// switched off when the request did not have it, so the origin receives the same header set.
public enum CurlCommand {
    /// False for tunnels: their bytes were opaque, so there is no HTTP request to send again.
    public static func isReproducible(_ flow: Flow) -> Bool {
        flow.kind != .tunnel && flow.method.uppercased() != "CONNECT"
    }

    /// The command, one option per line joined with ` \` continuations; for a tunnel a `#`
    /// comment saying why there is nothing to reproduce.
    public static func render(_ flow: Flow) -> String {
        guard isReproducible(flow) else {
            return "# \(ShellQuoting.commentText(flow.method)) \(ShellQuoting.commentText(flow.host)):\(flow.port) is a tunnel of opaque bytes: there is no HTTP request to reproduce\n"
        }
        let body = CurlRequestBody(flow.requestBody.bytes)
        var lines: [String] = []
        if flow.requestBody.truncated {
            lines.append("# the request body was truncated when captured: only \(flow.requestBody.bytes.count) of \(flow.requestBody.size) bytes are sent")
        }
        let headers = CurlHeaders(flow)
        if !headers.leftOut.isEmpty {
            let names = headers.leftOut.map(ShellQuoting.commentText)
            lines.append("# left out headers whose names are not HTTP tokens (curl cannot send them): " + names.joined(separator: ", "))
        }
        var first = (body.pipe.map { $0 + " | " } ?? "") + "curl"
        if needsNewlineVariable(flow, headers: headers, body: body) { first = ShellQuoting.newlineDefinition + "; " + first }
        if let methodOption = methodOption(flow.method, hasBody: !body.isEmpty) { first += " " + methodOption }
        first += " " + ShellQuoting.quote(flow.url)
        if let version = versionOption(flow.httpVersion, scheme: flow.scheme) { first += " " + version }
        first += " --path-as-is --globoff"
        var options = [first]
        options += headerOptions(headers.sent, flow: flow, hasBody: !body.isEmpty)
        if flow.requestHeaders.first(named: "Accept-Encoding") != nil { options.append("--compressed") }
        if let data = body.option { options.append(data) }
        lines.append(options.joined(separator: " \\\n  "))
        return lines.joined(separator: "\n") + "\n"
    }

    /// `-X` only when curl would not pick the method itself: GET without a body, POST with one
    /// (`--data-binary` implies it), HEAD via `--head` (with `-X HEAD` curl waits for a body).
    private static func methodOption(_ method: String, hasBody: Bool) -> String? {
        switch method {
        case "GET" where !hasBody, "POST" where hasBody: return nil
        case "HEAD" where !hasBody: return "--head"
        default: return "-X " + ShellQuoting.word(method)
        }
    }

    /// `--http2` only over TLS: for `http://` curl would send an h2c `Upgrade` the client never
    /// sent. No `--http3`: not every curl is built with it, and curl falls back from h2 anyway.
    private static func versionOption(_ version: String, scheme: String) -> String? {
        switch version.uppercased() {
        case "HTTP/1.0": return "--http1.0"
        case "HTTP/1.1": return "--http1.1"
        case "HTTP/2", "HTTP/2.0": return scheme.lowercased() == "https" ? "--http2" : nil
        default: return nil
        }
    }

    /// A LF in any argument is written as `"$proxyapp_nl"`, which the command defines first.
    private static func needsNewlineVariable(_ flow: Flow, headers: CurlHeaders, body: CurlRequestBody) -> Bool {
        ([flow.method, flow.url] + headers.sent.flatMap { [$0.name, $0.value] }).contains { $0.contains("\n") }
            || body.text?.contains("\n") == true
    }

    private static func headerOptions(_ headers: [HeaderField], flow: Flow, hasBody: Bool) -> [String] {
        var options: [String] = []
        for header in headers {
            // `-H 'Name:'` would remove the header; `Name;` sends it empty.
            let text = header.value.isEmpty ? "\(header.name);" : "\(header.name): \(header.value)"
            options.append("-H " + ShellQuoting.quote(text))
        }
        for name in ["User-Agent", "Accept"] where flow.requestHeaders.first(named: name) == nil {
            options.append("-H " + ShellQuoting.quote("\(name):"))
        }
        if hasBody && flow.requestHeaders.first(named: "Content-Type") == nil {
            options.append("-H " + ShellQuoting.quote("Content-Type:"))
        }
        return options
    }
}

/// The request headers curl is given, and those left out because their names are not HTTP
/// tokens (RFC 9110 `tchar`): curl reads `-H @name` as a file, and other such names are not HTTP.
private struct CurlHeaders {
    /// Headers curl must not be given: it computes them itself, or they describe one hop.
    private static let skippedNames: Set<String> = [
        "content-length", "connection", "keep-alive", "proxy-connection", "proxy-authorization", "te",
        "transfer-encoding", "upgrade",
    ]

    private(set) var sent: [HeaderField] = []
    private(set) var leftOut: [String] = []

    init(_ flow: Flow) {
        let authority = CurlAuthority(flow)
        for header in flow.requestHeaders {
            let name = header.name.lowercased()
            // HTTP/2 pseudo-headers (`:authority`, …) come from the URL and method.
            if name.hasPrefix(":") || Self.skippedNames.contains(name) { continue }
            if name == "host" && authority.matches(header.value) { continue }
            if Self.isToken(header.name) { sent.append(header) } else { leftOut.append(header.name) }
        }
    }

    static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
                || "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar))
        }
    }
}

/// The URL's authority as a `Host` header would carry it, with and without the default port.
private struct CurlAuthority {
    let forms: Set<String>

    init(_ flow: Flow) {
        let host = flow.urlHost.lowercased()
        let isDefault = (flow.scheme == "http" && flow.port == 80) || (flow.scheme == "https" && flow.port == 443)
        forms = isDefault ? [host, "\(host):\(flow.port)"] : ["\(host):\(flow.port)"]
    }

    func matches(_ value: String) -> Bool {
        forms.contains(value.trimmingCharacters(in: .whitespaces).lowercased())
    }
}

/// How a request body reaches curl: a quoted argument when it is text, else base64 decoded from
/// a pipe (`printf '%s' 'BASE64' | base64 -d | curl … --data-binary @-`), since a shell argument
/// cannot hold NUL and `--data-binary @…` would name a file. Text with control bytes other than
/// tab, CR and LF (or DEL) goes through the pipe too: it is rarely text, and stays readable there.
private struct CurlRequestBody {
    let isEmpty: Bool
    /// The body when it is passed as a quoted argument.
    let text: String?
    /// The commands in front of curl, if the body comes from stdin.
    let pipe: String?
    /// The `--data-binary` option.
    let option: String?

    init(_ bytes: Data) {
        isEmpty = bytes.isEmpty
        guard !bytes.isEmpty else {
            pipe = nil
            option = nil
            text = nil
            return
        }
        let hasBinaryControl = bytes.contains { ($0 < 0x20 && ![0x09, 0x0A, 0x0D].contains($0)) || $0 == 0x7F }
        if !hasBinaryControl, let text = String(data: bytes, encoding: .utf8), !text.hasPrefix("@") {
            self.text = text
            pipe = nil
            option = "--data-binary " + ShellQuoting.quote(text)
        } else {
            text = nil
            pipe = "printf '%s' " + ShellQuoting.quote(bytes.base64EncodedString()) + " | base64 -d"
            option = "--data-binary @-"
        }
    }
}
