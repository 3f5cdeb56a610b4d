import NIOCore

/// Reads HTTP/1.x responses off a byte stream and reports where each one ends, without keeping
/// or allocating anything per response.
///
/// Why not NIOHTTP1's decoder: a load generator shares the machine with what it measures, and
/// the decoder builds a head with a header array and strings for every response. This scanner
/// only looks for what framing needs (status, `Content-Length`, `Transfer-Encoding: chunked`,
/// `Connection: close`) and skips bodies in bulk. A head split over reads is gathered in one
/// buffer that is reused across responses. Informational (1xx) heads are skipped.
struct HTTPResponseScanner {
    /// Where the stream stands after a call.
    enum Outcome: Equatable {
        case needMoreBytes
        /// The response ended; bytes after it stay unread in the buffer given to `scan`.
        case complete(status: Int, connectionClose: Bool)
    }

    /// Why a stream is not a valid HTTP/1.x response.
    enum ScanError: Error, Equatable, CustomStringConvertible {
        case malformedStatusLine
        case malformedHeaderLine
        case headTooLarge
        case invalidContentLength
        case malformedChunk
        case closedBeforeResponse
        case truncatedHead
        case truncatedBody

        var description: String {
            switch self {
            case .malformedStatusLine: "malformed HTTP status line"
            case .malformedHeaderLine: "malformed HTTP header line"
            case .headTooLarge: "response head larger than \(HTTPResponseScanner.maxHeadBytes) bytes"
            case .invalidContentLength: "invalid or conflicting Content-Length"
            case .malformedChunk: "malformed chunked body"
            case .closedBeforeResponse: "connection closed before a response arrived"
            case .truncatedHead: "connection closed in the middle of the response head"
            case .truncatedBody: "connection closed before the response body ended"
            }
        }
    }

    static let maxHeadBytes = 64 * 1024

    private enum State: Equatable {
        case head
        case fixedBody(remaining: Int)
        case untilClose
        case chunkSize(value: Int, digits: Int)
        case chunkExtension(value: Int)
        case chunkSizeLF(value: Int)
        case chunkData(remaining: Int)
        case chunkDataCR
        case chunkDataLF
        case trailerLineStart
        case trailerLine
        case trailerLineLF
        case finalLF
        case done
    }

    private var state = State.head
    private var bodyless = false
    private var status = 0
    private var connectionClose = false
    /// Holds a head that arrived in pieces; empty otherwise.
    private var partialHead = ByteBuffer()

    /// Prepares for the next response. `bodyless`: the request was CONNECT (or HEAD), whose
    /// response ends with its head whatever the headers say.
    mutating func reset(bodyless: Bool) {
        state = .head
        self.bodyless = bodyless
        status = 0
        connectionClose = false
        partialHead.clear()
    }

    /// Consumes bytes of the current response from `buffer`.
    mutating func scan(_ buffer: inout ByteBuffer) throws(ScanError) -> Outcome {
        while true {
            switch state {
            case .done:
                return .complete(status: status, connectionClose: connectionClose)
            case .head:
                guard try scanHead(&buffer) else { return .needMoreBytes }
            case .fixedBody(let remaining):
                let left = Self.skip(remaining, in: &buffer)
                state = left == 0 ? .done : .fixedBody(remaining: left)
                if left > 0 { return .needMoreBytes }
            case .untilClose:
                buffer.moveReaderIndex(to: buffer.writerIndex)
                return .needMoreBytes
            case .chunkData(let remaining):
                let left = Self.skip(remaining, in: &buffer)
                state = left == 0 ? .chunkDataCR : .chunkData(remaining: left)
                if left > 0 { return .needMoreBytes }
            default:
                guard let byte = buffer.readInteger(as: UInt8.self) else { return .needMoreBytes }
                try scanChunkFraming(byte)
            }
        }
    }

    /// Skips up to `count` body bytes; returns how many are still to come.
    private static func skip(_ count: Int, in buffer: inout ByteBuffer) -> Int {
        let skipped = min(count, buffer.readableBytes)
        buffer.moveReaderIndex(forwardBy: skipped)
        return count - skipped
    }

    /// The peer closed the connection: completes a body delimited by the close, and is an
    /// error anywhere else in a response.
    mutating func endOfInput() throws(ScanError) -> Outcome {
        switch state {
        case .untilClose, .done:
            state = .done
            return .complete(status: status, connectionClose: true)
        case .head:
            throw partialHead.readableBytes == 0 ? .closedBeforeResponse : .truncatedHead
        default:
            throw .truncatedBody
        }
    }

    // MARK: - head

    /// Returns true once a complete head was parsed (and the body state chosen).
    private mutating func scanHead(_ buffer: inout ByteBuffer) throws(ScanError) -> Bool {
        let previous = partialHead.readableBytes
        if previous == 0, let end = Self.headEnd(in: buffer, from: buffer.readerIndex) {
            let headLength = end - buffer.readerIndex
            try parseHead(buffer.readableBytesView.prefix(headLength))
            buffer.moveReaderIndex(to: end)
            return true
        }
        // The head spans reads: gather it; search the new bytes (and the 3 before them).
        guard previous + buffer.readableBytes <= Self.maxHeadBytes + 4 else { throw .headTooLarge }
        partialHead.writeImmutableBuffer(buffer)
        buffer.moveReaderIndex(to: buffer.writerIndex)
        guard previous > 0,
              let end = Self.headEnd(in: partialHead, from: partialHead.readerIndex + max(0, previous - 3))
        else { return false }
        // Give back the bytes after the head: they belong to the body.
        let headLength = end - partialHead.readerIndex
        try parseHead(partialHead.readableBytesView.prefix(headLength))
        buffer.moveReaderIndex(to: buffer.writerIndex - (partialHead.readableBytes - headLength))
        partialHead.clear()
        return true
    }

    /// Index just past the first CRLF CRLF at or after `start`, or nil.
    private static func headEnd(in buffer: ByteBuffer, from start: Int) -> Int? {
        let view = buffer.readableBytesView
        var index = start
        let last = view.endIndex - 4
        while index <= last {
            if view[index + 3] == lf {
                if view[index] == cr && view[index + 1] == lf && view[index + 2] == cr { return index + 4 }
                index += 1
            } else if view[index + 3] == cr {
                index += 1
            } else {
                index += 4
            }
        }
        return nil
    }

    /// Parses a complete head (ending in CRLF CRLF) and chooses how the body ends.
    private mutating func parseHead(_ head: ByteBufferView.SubSequence) throws(ScanError) {
        guard head.count <= Self.maxHeadBytes else { throw .headTooLarge }
        var lines = HeadLines(head)
        guard let statusLine = lines.next() else { throw .malformedStatusLine }
        let (parsedStatus, isHTTP10) = try Self.parseStatusLine(statusLine)
        var contentLength: Int?
        var chunked = false
        var closeToken = false
        var keepAliveToken = false
        while let line = lines.next(), !line.isEmpty {
            guard let colon = line.firstIndex(of: UInt8(ascii: ":")), colon > line.startIndex else {
                throw .malformedHeaderLine
            }
            let name = line[line.startIndex..<colon]
            let value = Self.trimmed(line[line.index(after: colon)...])
            if Self.equalsIgnoringCase(name, "content-length") {
                let length = try Self.parseContentLength(value)
                if let contentLength, contentLength != length { throw .invalidContentLength }
                contentLength = length
            } else if Self.equalsIgnoringCase(name, "transfer-encoding") {
                chunked = Self.endsWithIgnoringCase(value, "chunked")
            } else if Self.equalsIgnoringCase(name, "connection") {
                closeToken = closeToken || Self.containsIgnoringCase(value, "close")
                keepAliveToken = keepAliveToken || Self.containsIgnoringCase(value, "keep-alive")
            }
        }
        if parsedStatus >= 100 && parsedStatus < 200 && parsedStatus != 101 {
            state = .head  // informational: the real response follows
            return
        }
        status = parsedStatus
        connectionClose = closeToken || (isHTTP10 && !keepAliveToken) || parsedStatus == 101
        if bodyless || parsedStatus == 204 || parsedStatus == 304 || parsedStatus == 101 {
            state = .done
        } else if chunked {
            state = .chunkSize(value: 0, digits: 0)
        } else if let contentLength {
            state = contentLength == 0 ? .done : .fixedBody(remaining: contentLength)
        } else {
            connectionClose = true
            state = .untilClose
        }
    }

    /// `HTTP/1.x SSS[ reason]` → (status, is HTTP/1.0).
    private static func parseStatusLine(_ line: ByteBufferView.SubSequence) throws(ScanError) -> (Int, Bool) {
        let prefix: [UInt8] = Array("HTTP/1.".utf8)
        guard line.count >= 12, line.starts(with: prefix) else { throw .malformedStatusLine }
        var index = line.startIndex + prefix.count
        let minor = line[index]
        guard minor == UInt8(ascii: "0") || minor == UInt8(ascii: "1") else { throw .malformedStatusLine }
        index += 1
        guard line[index] == UInt8(ascii: " ") else { throw .malformedStatusLine }
        var status = 0
        for offset in 1...3 {
            let digit = line[index + offset]
            guard digit >= UInt8(ascii: "0") && digit <= UInt8(ascii: "9") else { throw .malformedStatusLine }
            status = status * 10 + Int(digit - UInt8(ascii: "0"))
        }
        guard status >= 100, line.count == 12 || line[index + 4] == UInt8(ascii: " ") else {
            throw .malformedStatusLine
        }
        return (status, minor == UInt8(ascii: "0"))
    }

    private static func parseContentLength(_ value: ByteBufferView.SubSequence) throws(ScanError) -> Int {
        guard !value.isEmpty, value.count <= 18 else { throw .invalidContentLength }
        var length = 0
        for byte in value {
            guard byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") else { throw .invalidContentLength }
            length = length * 10 + Int(byte - UInt8(ascii: "0"))
        }
        return length
    }

    // MARK: - chunked framing

    private mutating func scanChunkFraming(_ byte: UInt8) throws(ScanError) {
        switch state {
        case .chunkSize(let value, let digits):
            if let digit = Self.hexValue(byte) {
                guard digits < 15 else { throw .malformedChunk }
                state = .chunkSize(value: value << 4 | digit, digits: digits + 1)
            } else if digits > 0 && byte == cr {
                state = .chunkSizeLF(value: value)
            } else if digits > 0 && (byte == UInt8(ascii: ";") || byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t")) {
                state = .chunkExtension(value: value)
            } else {
                throw .malformedChunk
            }
        case .chunkExtension(let value):
            if byte == cr { state = .chunkSizeLF(value: value) }
        case .chunkSizeLF(let value):
            guard byte == lf else { throw .malformedChunk }
            state = value == 0 ? .trailerLineStart : .chunkData(remaining: value)
        case .chunkDataCR:
            guard byte == cr else { throw .malformedChunk }
            state = .chunkDataLF
        case .chunkDataLF:
            guard byte == lf else { throw .malformedChunk }
            state = .chunkSize(value: 0, digits: 0)
        case .trailerLineStart:
            state = byte == cr ? .finalLF : .trailerLine
        case .trailerLine:
            if byte == cr { state = .trailerLineLF }
        case .trailerLineLF:
            guard byte == lf else { throw .malformedChunk }
            state = .trailerLineStart
        case .finalLF:
            guard byte == lf else { throw .malformedChunk }
            state = .done
        case .head, .fixedBody, .untilClose, .chunkData, .done:
            preconditionFailure("not a chunk framing state: \(state)")
        }
    }

    private static func hexValue(_ byte: UInt8) -> Int? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): Int(byte - UInt8(ascii: "0"))
        case UInt8(ascii: "a")...UInt8(ascii: "f"): Int(byte - UInt8(ascii: "a")) + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): Int(byte - UInt8(ascii: "A")) + 10
        default: nil
        }
    }

    // MARK: - bytes

    private static func trimmed(_ bytes: ByteBufferView.SubSequence) -> ByteBufferView.SubSequence {
        var slice = bytes
        while let first = slice.first, first == UInt8(ascii: " ") || first == UInt8(ascii: "\t") { slice = slice.dropFirst() }
        while let last = slice.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { slice = slice.dropLast() }
        return slice
    }

    private static func lowercased(_ byte: UInt8) -> UInt8 {
        byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte | 0x20 : byte
    }

    /// `lowercase` must be lower-case ASCII.
    private static func equalsIgnoringCase(_ bytes: ByteBufferView.SubSequence, _ lowercase: StaticString) -> Bool {
        guard bytes.count == lowercase.utf8CodeUnitCount else { return false }
        return matches(bytes, at: bytes.startIndex, lowercase)
    }

    private static func endsWithIgnoringCase(_ bytes: ByteBufferView.SubSequence, _ lowercase: StaticString) -> Bool {
        guard bytes.count >= lowercase.utf8CodeUnitCount else { return false }
        return matches(bytes, at: bytes.endIndex - lowercase.utf8CodeUnitCount, lowercase)
    }

    private static func containsIgnoringCase(_ bytes: ByteBufferView.SubSequence, _ lowercase: StaticString) -> Bool {
        let length = lowercase.utf8CodeUnitCount
        guard bytes.count >= length else { return false }
        for start in bytes.startIndex...(bytes.endIndex - length) where matches(bytes, at: start, lowercase) {
            return true
        }
        return false
    }

    private static func matches(_ bytes: ByteBufferView.SubSequence, at start: Int, _ lowercase: StaticString) -> Bool {
        lowercase.withUTF8Buffer { pattern in
            for offset in 0..<pattern.count where lowercased(bytes[start + offset]) != pattern[offset] {
                return false
            }
            return true
        }
    }
}

private let cr = UInt8(ascii: "\r")
private let lf = UInt8(ascii: "\n")

/// The CRLF-terminated lines of a head, as slices of it (the last, empty line included).
private struct HeadLines {
    private let head: ByteBufferView.SubSequence
    private var position: Int

    init(_ head: ByteBufferView.SubSequence) {
        self.head = head
        position = head.startIndex
    }

    mutating func next() -> ByteBufferView.SubSequence? {
        var index = position
        while index + 1 < head.endIndex {
            if head[index] == cr && head[index + 1] == lf {
                let line = head[position..<index]
                position = index + 2
                return line
            }
            index += 1
        }
        return nil
    }
}
