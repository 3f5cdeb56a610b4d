/// Requests that try to make the proxy and the origin disagree on where a body ends (request
/// smuggling), for the framing tests: every `Connection`/`Proxy-Connection` token naming a framing
/// header or `Host`, Transfer-Encoding spellings, lists and duplicates, Content-Length forms, both
/// at once, HTTP/1.0, chunk extensions and trailers, across methods.
///
/// Each body carries a complete second request (`/smuggled-N-x`): if the proxy forwards the body
/// unframed, a strict origin reads it as a request of its own.
struct FramingVariant {
    /// Says what the request tries, for failure messages.
    var name: String
    var method: String
    var version: String = "HTTP/1.1"
    /// Header lines after Host (each without CRLF), framing included.
    var headers: [String]
    /// The bytes after the header section, as sent.
    var body: String

    /// The path of variant `index`, and the marker that finds its requests at the origin.
    static func path(_ index: Int) -> String { "/v-\(index)-x" }
    static func marker(_ index: Int) -> String { "-\(index)-x" }

    /// The request as raw text, to `target` with `host` as Host.
    func text(target: String, host: String) -> String {
        var lines = ["\(method) \(target) \(version)", "Host: \(host)"]
        lines += headers
        return lines.joined(separator: "\r\n") + "\r\n\r\n" + body
    }

    /// A complete request for `/smuggled-N-x` (or `prefix` instead of `/smuggled`).
    static func smuggled(_ index: Int, prefix: String = "/smuggled") -> String {
        "GET \(prefix)-\(index)-x HTTP/1.1\r\nHost: smuggled.test\r\n\r\n"
    }

    static func chunked(_ payload: String, extensions: String = "", trailers: [String] = []) -> String {
        let size = String(payload.utf8.count, radix: 16)
        return "\(size)\(extensions)\r\n\(payload)\r\n0\r\n" + trailers.map { $0 + "\r\n" }.joined() + "\r\n"
    }

    /// Every variant; `index` numbers them so each one's requests can be told apart at the origin.
    /// - Parameter smuggledPrefix: the path the hidden request asks for.
    static func all(smuggledPrefix: String = "/smuggled") -> [(index: Int, variant: FramingVariant)] {
        var variants: [FramingVariant] = []
        let everyMethod = ["GET", "HEAD", "DELETE", "OPTIONS", "PURGE", "POST", "PUT", "TRACE"]
        let someMethods = ["GET", "POST", "PURGE"]
        var index = 0
        func add(_ name: String, _ methods: [String], version: String = "HTTP/1.1",
                 headers: @escaping (_ length: Int) -> [String], body: @escaping (_ payload: String) -> String) {
            for method in methods {
                index += 1
                let payload = smuggled(index, prefix: smuggledPrefix)
                let sent = body(payload)
                variants.append(FramingVariant(name: "\(method) \(name)", method: method, version: version,
                                               headers: headers(sent.utf8.count), body: sent))
            }
        }
        // Content-Length bodies with Connection tokens that must not unframe them.
        for extra in [[], ["Connection: Content-Length"], ["Proxy-Connection: Content-Length"],
                      ["Connection: keep-alive, CONTENT-LENGTH"], ["Connection: Host"],
                      ["Connection: content-length", "Proxy-Connection: host, transfer-encoding"],
                      ["Connection: ,,content-length,,"], ["Connection:\tContent-Length\t"],
                      ["Connection: close", "Connection: Content-Length"]] {
            add("Content-Length with \(extra)", everyMethod, headers: { extra + ["Content-Length: \($0)"] }, body: { $0 })
        }
        // Chunked bodies: spellings, lists, duplicates, and Connection naming Transfer-Encoding.
        let codings: [[String]] = [
            ["Transfer-Encoding: chunked"], ["Transfer-Encoding: Chunked"], ["Transfer-Encoding: CHUNKED"],
            ["Transfer-Encoding: identity, chunked"], ["Transfer-Encoding: gzip, chunked"],
            ["Transfer-Encoding: gzip", "Transfer-Encoding: chunked"], ["Transfer-Encoding: chunked, identity"],
            ["Connection: Transfer-Encoding", "Transfer-Encoding: chunked"],
            ["Proxy-Connection: TRANSFER-ENCODING", "Transfer-Encoding: chunked"],
            ["Transfer-Encoding:  chunked "], ["Transfer-Encoding: chunked;q=1"],
            ["Transfer-Encoding: ,chunked"], ["Transfer-Encoding: chunked, chunked"], ["Transfer-Encoding: \"chunked\""],
            ["Transfer-Encoding:"], ["Transfer-Encoding: \tchunked"], ["Transfer_Encoding: chunked"],
            ["Transfer-Encoding: chunked", "Connection: close, Transfer-Encoding"],
        ]
        for coding in codings {
            add("with \(coding)", everyMethod, headers: { _ in coding }, body: { chunked($0) })
        }
        // Content-Length spellings.
        for form in ["+%d", "0%d", " %d ", "%d, %d", "%d,%d", "0x%x", "%d.0", "99999999999999999999", "-1", "%d %d", "",
                     "1e2", "\t%d"] {
            add("Content-Length '\(form)'", someMethods, headers: { length in
                ["Content-Length: " + form.replacingOccurrences(of: "%d", with: String(length))
                    .replacingOccurrences(of: "%x", with: String(length, radix: 16))]
            }, body: { $0 })
        }
        add("two equal Content-Length headers", someMethods,
            headers: { ["Content-Length: \($0)", "Content-Length: \($0)"] }, body: { $0 })
        add("two different Content-Length headers", someMethods,
            headers: { ["Content-Length: 0", "Content-Length: \($0)"] }, body: { $0 })
        // Both framings at once, either order.
        add("Content-Length then Transfer-Encoding", someMethods,
            headers: { ["Content-Length: \($0)", "Transfer-Encoding: chunked"] }, body: { chunked($0) })
        add("Transfer-Encoding then Content-Length", someMethods,
            headers: { _ in ["Transfer-Encoding: chunked", "Content-Length: 4"] }, body: { chunked($0) })
        // HTTP/1.0.
        add("HTTP/1.0 with Content-Length", someMethods, version: "HTTP/1.0",
            headers: { ["Content-Length: \($0)"] }, body: { $0 })
        add("HTTP/1.0 with Transfer-Encoding", someMethods, version: "HTTP/1.0",
            headers: { _ in ["Transfer-Encoding: chunked"] }, body: { chunked($0) })
        // Chunk extensions and trailers.
        add("chunk extension", someMethods, headers: { _ in ["Transfer-Encoding: chunked"] },
            body: { chunked($0, extensions: ";ext=\"1\"") })
        add("empty chunk extension", someMethods, headers: { _ in ["Transfer-Encoding: chunked"] },
            body: { chunked($0, extensions: ";") })
        add("chunk extension with a quoted CRLF", someMethods, headers: { _ in ["Transfer-Encoding: chunked"] },
            body: { chunked($0, extensions: ";a=\"x\r\n0\r\n\r\n\"") })
        add("trailer", someMethods, headers: { _ in ["Transfer-Encoding: chunked"] },
            body: { chunked($0, trailers: ["X-Checksum: 1"]) })
        add("framing headers in trailers", someMethods, headers: { _ in ["Transfer-Encoding: chunked"] },
            body: { chunked($0, trailers: ["Content-Length: 99", "Transfer-Encoding: chunked", "Host: evil.test"]) })
        add("no body, Connection: Host", everyMethod, headers: { _ in ["Connection: Host"] }, body: { _ in "" })
        return variants.enumerated().map { ($0.offset + 1, $0.element) }
    }
}
