import Foundation
import ProxyModel

/// An HTTP/1.x response parsed from raw bytes, with just enough framing rules (Content-Length,
/// chunked, no body for 1xx/204/304/HEAD, read-to-close) to split a stream of responses.
///
/// It exists because tests that speak raw bytes (pipelining, CONNECT, upgrades, malformed
/// input) must check the proxy's framing themselves rather than trust a client library's.
struct RawResponse: Sendable {
    var version: String
    var status: Int
    var reason: String
    var headers: [HeaderField]
    var body: Data

    /// The first value of header `name`, compared case-insensitively.
    func header(_ name: String) -> String? {
        headers.first(named: name)
    }

    var bodyText: String { String(decoding: body, as: UTF8.self) }

    /// The one-line reason of an answer the proxy made itself: its body, or for an answer to a
    /// CONNECT (which NIO sends without a body) the `details` of its `Proxy-Status`, with the
    /// body's final newline. Nil when neither is there.
    var proxyReason: String? {
        if !body.isEmpty { return bodyText }
        guard let status = header("Proxy-Status"), let start = status.range(of: "details=\""), status.hasSuffix("\"") else {
            return nil
        }
        return String(status[start.upperBound...].dropLast()) + "\n"
    }

    struct ParseError: Error, CustomStringConvertible {
        var description: String
    }

    /// Parses one response from the start of `data`.
    ///
    /// - Parameters:
    ///   - noBody: the request was HEAD (or CONNECT answered 2xx): the response has no body.
    ///   - atEOF: the connection is closed, so a body without length ends with `data`.
    /// - Returns: the response and how many bytes it used, or nil when more bytes are needed.
    static func parse(_ data: Data, noBody: Bool = false, atEOF: Bool = false) throws -> (RawResponse, Int)? {
        let bytes = [UInt8](data)
        guard let headEnd = find([13, 10, 13, 10], in: bytes, from: 0) else { return nil }
        let headText = String(decoding: bytes[0..<headEnd], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let statusLine = lines.removeFirst()
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/"), let status = Int(parts[1]) else {
            throw ParseError(description: "bad status line '\(statusLine.prefix(200))'")
        }
        var headers: [HeaderField] = []
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else {
                throw ParseError(description: "bad header line '\(line.prefix(200))'")
            }
            headers.append(HeaderField(name: String(line[..<colon]),
                                       value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var response = RawResponse(version: String(parts[0]), status: status,
                                   reason: parts.count > 2 ? String(parts[2]) : "", headers: headers, body: Data())
        let bodyStart = headEnd + 4
        if noBody || (100..<200).contains(status) || status == 204 || status == 304 {
            return (response, bodyStart)
        }
        if response.header("transfer-encoding")?.lowercased().contains("chunked") == true {
            guard let (body, end) = try dechunk(bytes, from: bodyStart) else { return nil }
            response.body = body
            return (response, end)
        }
        if let lengthText = response.header("content-length") {
            guard let length = Int(lengthText) else {
                throw ParseError(description: "bad Content-Length '\(lengthText)'")
            }
            guard bytes.count - bodyStart >= length else { return nil }
            response.body = Data(bytes[bodyStart..<(bodyStart + length)])
            return (response, bodyStart + length)
        }
        guard atEOF else { return nil }
        response.body = Data(bytes[bodyStart...])
        return (response, bytes.count)
    }

    private static func dechunk(_ bytes: [UInt8], from start: Int) throws -> (Data, Int)? {
        var body = Data()
        var position = start
        for _ in 0..<1_000_000 {
            guard let lineEnd = find([13, 10], in: bytes, from: position) else { return nil }
            let sizeText = String(decoding: bytes[position..<lineEnd], as: UTF8.self)
                .split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
            guard let size = Int(sizeText, radix: 16) else {
                throw ParseError(description: "bad chunk size '\(sizeText.prefix(40))'")
            }
            position = lineEnd + 2
            if size == 0 {
                // Trailers until an empty line.
                guard let trailerEnd = find([13, 10], in: bytes, from: position) else { return nil }
                if trailerEnd == position { return (body, position + 2) }
                guard let end = find([13, 10, 13, 10], in: bytes, from: position) else { return nil }
                return (body, end + 4)
            }
            guard bytes.count >= position + size + 2 else { return nil }
            body.append(contentsOf: bytes[position..<(position + size)])
            position += size + 2
        }
        throw ParseError(description: "too many chunks")
    }

    static func find(_ needle: [UInt8], in bytes: [UInt8], from start: Int) -> Int? {
        guard bytes.count >= needle.count, start <= bytes.count - needle.count else { return nil }
        var index = start
        while index <= bytes.count - needle.count {
            if bytes[index] == needle[0] && Array(bytes[index..<(index + needle.count)]) == needle {
                return index
            }
            index += 1
        }
        return nil
    }
}
