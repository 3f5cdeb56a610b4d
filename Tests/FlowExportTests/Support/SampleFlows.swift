import Compressors
import Foundation
import ProxyModel

/// The varied flows the HAR tests export: one of each shape the writer must get right.
enum SampleFlows {
    static let started = Date(timeIntervalSince1970: 1_795_000_000.345)
    static let json = Array(#"{"greeting":"héllo","items":[1,2,3]}"#.utf8)
    static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0x00, 0x00, 0x0D, 0xFF, 0xFE]

    static func body(_ bytes: [UInt8], size: Int? = nil) -> CapturedBody {
        CapturedBody(bytes: Data(bytes), size: Int64(size ?? bytes.count), truncated: (size ?? bytes.count) > bytes.count)
    }

    static func finished(after milliseconds: Double) -> Date {
        started.addingTimeInterval(milliseconds / 1000)
    }

    static var plain: Flow {
        Flow(id: 1, clientAddress: "127.0.0.1:50000", startedAt: started, finishedAt: finished(after: 12),
             timings: FlowTimings(dns: 1.5, connect: 2.25, send: 0.125, wait: 7, receive: 1.1),
             host: "example.com", path: "/search?q=caf%C3%A9+au+lait&empty=&flag",
             requestHeaders: [HeaderField(name: "Host", value: "example.com"),
                              HeaderField(name: "Cookie", value: "a=1; b=two")],
             status: 200, reason: "OK",
             responseHeaders: [HeaderField(name: "Content-Type", value: "text/html; charset=utf-8"),
                               HeaderField(name: "Set-Cookie", value: "sid=xyz; Path=/; Domain=example.com; Expires=Wed, 21 Oct 2026 07:28:00 GMT; HttpOnly; Secure; SameSite=Lax")],
             responseBody: body(Array("<h1>hi</h1>".utf8)), serverAddress: "93.184.216.34")
    }

    static var httpsWithTLS: Flow {
        var flow = plain
        flow.id = 2
        flow.scheme = "https"
        flow.port = 443
        flow.timings = FlowTimings(dns: 1, connect: 2, tls: 3, send: 0.5, wait: 4, receive: 0.5)
        flow.tls = TLSDetails(clientVersion: "TLSv1.3", alpn: "http/1.1", sni: "example.com", upstreamVersion: "TLSv1.2",
                              upstreamSubject: "CN=example.com", upstreamIssuer: "CN=Some CA",
                              upstreamNotAfter: Date(timeIntervalSince1970: 1_800_000_000))
        flow.marked = true
        flow.note = "a note"
        flow.appliedRules = ["Map remote: staging", #"Rewrite "UA" \ v2"#]
        return flow
    }

    static func encodedJSON(_ encoding: String, _ encode: ([UInt8]) -> [UInt8]) -> Flow {
        let encoded = encode(json)
        return Flow(id: 3, startedAt: started, finishedAt: finished(after: 5), host: "api.example.com", path: "/data",
                    status: 200, reason: "OK",
                    responseHeaders: [HeaderField(name: "Content-Type", value: "application/json"),
                                      HeaderField(name: "Content-Encoding", value: encoding)],
                    responseBody: body(encoded))
    }

    static var encodedJSONFlows: [Flow] {
        [encodedJSON("gzip", Compressors.gzip), encodedJSON("br", Compressors.brotli), encodedJSON("zstd", Compressors.zstd)]
    }

    static var image: Flow {
        Flow(startedAt: started, host: "cdn.example.com", path: "/a.png", status: 200, reason: "OK",
             responseHeaders: [HeaderField(name: "Content-Type", value: "image/png")], responseBody: body(png))
    }

    static var formPost: Flow {
        Flow(startedAt: started, method: "POST", host: "example.com", path: "/login",
             requestHeaders: [HeaderField(name: "Content-Type", value: "application/x-www-form-urlencoded")],
             requestBody: body(Array("user=ann+lee&password=s%26cret&remember".utf8)),
             status: 302, reason: "Found", responseHeaders: [HeaderField(name: "Location", value: "/home")])
    }

    static var binaryPost: Flow {
        Flow(startedAt: started, method: "PUT", host: "example.com", path: "/upload",
             requestHeaders: [HeaderField(name: "Content-Type", value: "application/octet-stream")],
             requestBody: body(png), status: 204, reason: "No Content")
    }

    static var noResponse: Flow {
        Flow(startedAt: started, finishedAt: finished(after: 30), host: "down.example.com", path: "/",
             httpVersion: "HTTP/1.0", error: "could not connect to down.example.com:80 (connection refused)")
    }

    static var truncated: Flow {
        Flow(startedAt: started, host: "example.com", path: "/big.txt", status: 200, reason: "OK",
             responseHeaders: [HeaderField(name: "Content-Type", value: "text/plain")],
             responseBody: body(Array("abcdefghij".utf8), size: 1000))
    }

    static var corruptGzip: Flow {
        var bytes = Compressors.gzip(Array(String(repeating: "corrupt me ", count: 50).utf8))
        bytes[bytes.count / 2] ^= 0xFF
        bytes[bytes.count / 2 + 1] ^= 0xFF
        return Flow(startedAt: started, host: "example.com", path: "/c", status: 200, reason: "OK",
                    responseHeaders: [HeaderField(name: "Content-Type", value: "text/plain"),
                                      HeaderField(name: "Content-Encoding", value: "gzip")],
                    responseBody: body(bytes))
    }

    static var tunnel: Flow {
        Flow(id: 9, kind: .tunnel, clientAddress: "127.0.0.1:50001", startedAt: started, finishedAt: finished(after: 1000),
             timings: FlowTimings(dns: 2, connect: 3), method: "CONNECT", scheme: "tcp", host: "pinned.example.com",
             port: 443, path: "", requestHeaders: [HeaderField(name: "Host", value: "pinned.example.com:443")],
             status: 200, reason: "Connection established", bytesUp: 517, bytesDown: 4096,
             note: "pinned: client rejected the certificate", serverAddress: "10.0.0.1")
    }

    static var awkwardHeaders: Flow {
        Flow(startedAt: started, host: "example.com", path: "/ü?x=%ZZ",
             requestHeaders: [HeaderField(name: "X-Control", value: "tab\there\u{01}bell\u{07}\"quote\" back\\slash"),
                              HeaderField(name: "X-Unicode", value: "日本語 \u{2028} ☃"),
                              HeaderField(name: "X-Replaced", value: String(decoding: [0x61, 0xFF, 0x62], as: UTF8.self))],
             status: 200, reason: "OK", responseHeaders: [HeaderField(name: "X-Newline", value: "a\r\nb")])
    }

    static var all: [Flow] {
        [plain, httpsWithTLS] + encodedJSONFlows
            + [image, formPost, binaryPost, noResponse, truncated, corruptGzip, tunnel, awkwardHeaders]
    }
}
