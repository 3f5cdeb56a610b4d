// proxyapp-bench-flows COUNT DATABASE: writes COUNT synthetic but realistic flows into the capture
// database at DATABASE (created if missing), for scripts/bench's export figure and for anyone who
// needs a large capture to try the TUI or the exporters on. Deterministic: flow i is always the
// same. The mix, per ten flows: six JSON API calls over HTTPS (gzip-encoded, TLS details), one
// form POST answered 302 with cookies, one PNG image (binary), one HTML page (br-encoded), and
// one failure or tunnel. Bodies are encoded once and shared, so generation stays fast.
import BodyCodec
import CaptureStore
import Foundation
import ProxyModel
import SeededRandom

let arguments = Array(CommandLine.arguments.dropFirst())
guard arguments.count == 2, let count = Int(arguments[0]), count > 0 else {
    FileHandle.standardError.write(Data("usage: proxyapp-bench-flows COUNT DATABASE   (COUNT > 0; DATABASE is a .sqlite path)\n".utf8))
    exit(2)
}

/// The shared bodies of the mix, encoded once.
struct Bodies {
    let json: [UInt8]
    let gzipJSON: [UInt8]
    let html: [UInt8]
    let brotliHTML: [UInt8]
    let png: [UInt8]
    let form: [UInt8]

    init() throws {
        let items = (0..<24).map { index in
            #"{"id":\#(index),"name":"item \#(index)","price":\#(index * 3 + 7).5,"tags":["a","b"],"available":true}"#
        }
        json = Array(#"{"items":[\#(items.joined(separator: ","))],"page":1,"next":"/v1/items?page=2"}"#.utf8)
        gzipJSON = try BodyEncoder.encode(json, contentEncoding: "gzip")
        let paragraphs = (0..<60).map { "<p>Paragraph \($0) of a page that a browser fetched through the proxy.</p>" }
        html = Array("<!doctype html><html><head><title>Bench</title></head><body>\(paragraphs.joined())</body></html>".utf8)
        brotliHTML = try BodyEncoder.encode(html, contentEncoding: "br")
        var generator = SeededRandom(seed: 42)
        png = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + (0..<3_000).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        form = Array("user=someone%40example.test&password=hunter2&remember=on".utf8)
    }
}

func headers(_ pairs: [(String, String)]) -> [HeaderField] {
    pairs.map { HeaderField(name: $0.0, value: $0.1) }
}

func flow(_ index: Int, bodies: Bodies, epoch: Date) -> Flow {
    let started = epoch.addingTimeInterval(Double(index) * 0.01)
    let host = "api\(index % 50).example.test"
    var flow = Flow(
        clientAddress: "127.0.0.1:\(40_000 + index % 20_000)", startedAt: started,
        finishedAt: started.addingTimeInterval(0.042),
        timings: FlowTimings(dns: -1, connect: -1, tls: -1, send: 0.1, wait: 40.5, receive: 1.4),
        method: "GET", scheme: "https", host: host, port: 443, path: "/v1/items/\(index)?page=1&sort=price",
        requestHeaders: headers([
            ("Host", host), ("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) bench/1.0"), ("Accept", "application/json"),
            ("Accept-Encoding", "gzip, br"), ("Accept-Language", "en-GB,en;q=0.9"),
            ("Authorization", "Bearer eyJhbGciOiJIUzI1NiJ9.bench.\(index)"), ("Cookie", "session=abc\(index); theme=dark"),
        ]),
        status: 200, reason: "OK", serverAddress: "192.0.2.\(index % 250 + 1)")
    var response = [
        ("Date", "Sun, 22 Nov 2026 10:00:00 GMT"), ("Server", "nginx"), ("Cache-Control", "no-store"),
        ("X-Request-Id", "req-\(index)"), ("Vary", "Accept-Encoding"),
    ]
    switch index % 10 {
    case 0...5:
        flow.tls = TLSDetails(clientVersion: "TLSv1.3", alpn: "http/1.1", sni: host, upstreamVersion: "TLSv1.3",
                              upstreamSubject: "CN=\(host)", upstreamIssuer: "CN=Bench CA")
        response += [("Content-Type", "application/json; charset=utf-8"), ("Content-Encoding", "gzip"),
                     ("Content-Length", "\(bodies.gzipJSON.count)")]
        flow.responseBody = CapturedBody(bytes: Data(bodies.gzipJSON), size: Int64(bodies.gzipJSON.count))
    case 6:
        flow.method = "POST"
        flow.path = "/login"
        flow.requestHeaders += headers([("Content-Type", "application/x-www-form-urlencoded"),
                                        ("Content-Length", "\(bodies.form.count)")])
        flow.requestBody = CapturedBody(bytes: Data(bodies.form), size: Int64(bodies.form.count))
        flow.status = 302
        flow.reason = "Found"
        response += [("Location", "/home"), ("Set-Cookie", "session=s\(index); Path=/; HttpOnly; Secure; SameSite=Lax"),
                     ("Set-Cookie", "seen=1; Max-Age=3600"), ("Content-Length", "0")]
    case 7:
        flow.scheme = "http"
        flow.port = 80
        flow.path = "/img/\(index).png"
        response += [("Content-Type", "image/png"), ("Content-Length", "\(bodies.png.count)")]
        flow.responseBody = CapturedBody(bytes: Data(bodies.png), size: Int64(bodies.png.count))
    case 8:
        flow.path = "/page/\(index)"
        response += [("Content-Type", "text/html; charset=utf-8"), ("Content-Encoding", "br"),
                     ("Content-Length", "\(bodies.brotliHTML.count)")]
        flow.responseBody = CapturedBody(bytes: Data(bodies.brotliHTML), size: Int64(bodies.brotliHTML.count))
    default:
        if index % 20 == 9 {
            flow.kind = .tunnel
            flow.method = "CONNECT"
            flow.scheme = "tcp"
            flow.path = ""
            flow.bytesUp = 5_120
            flow.bytesDown = 48_000
            flow.note = "pinned: client rejected the certificate (unknown_ca alert)"
        } else {
            flow.status = nil
            flow.reason = nil
            flow.error = "upstream \(host):443 timed out after 10 s"
            flow.timings = FlowTimings(dns: 1.2, connect: -1)
            flow.serverAddress = nil
        }
        response = []
    }
    flow.responseHeaders = headers(response)
    flow.marked = index % 97 == 0
    return flow
}

do {
    let path = arguments[1]
    try FileManager.default.createDirectory(
        at: URL(fileURLWithPath: path).deletingLastPathComponent(), withIntermediateDirectories: true)
    let repository = TrafficRepository(database: try TrafficDatabase(path: path))
    let bodies = try Bodies()
    let epoch = Date(timeIntervalSince1970: 1_795_341_600)  // 2026-11-22T10:00:00Z
    var next = 0
    while next < count {
        let batch = (next..<min(count, next + 2_000)).map { flow($0, bodies: bodies, epoch: epoch) }
        try repository.insert(batch)
        next += batch.count
    }
    try repository.checkpoint()
    print("wrote \(count) flows to \(path)")
} catch {
    FileHandle.standardError.write(Data("proxyapp-bench-flows: \(error)\n".utf8))
    exit(1)
}
