import CZlib

/// Inflates one direction's permessage-deflate (RFC 7692) WebSocket messages for the capture.
///
/// Why here: it is zlib, like the other bounded decoders in this module, and ProxyCore (which
/// reads the frames) links no C library. Its methods are exactly those of
/// `ProxyCore.WebSocketPayloadInflating`, so a module that sees both conforms it in one line;
/// BodyCodec does not depend on ProxyCore.
///
/// One raw-deflate stream per direction, fed each message's compressed bytes as they arrive;
/// `finishMessage` appends the 0x00 0x00 0xff 0xff the sender removed (RFC 7692 §7.2.2). With
/// context takeover the LZ77 window runs on from one message to the next; without it
/// (`*_no_context_takeover`) the stream is reset after every message. A sender that ends a message
/// with a final (BFINAL) block instead (§7.2.3.3) gets a fresh stream that keeps its window.
///
/// Bounded: output goes through a fixed 16 KiB buffer and only `limit` bytes of it are ever
/// appended; past that the call returns false and the caller abandons the message, so a
/// decompression bomb costs the limit and this buffer. A message abandoned or corrupt while
/// context takeover is in effect leaves the window unknown: every later message then throws
/// instead of inflating into wrong bytes.
public final class WebSocketInflater {
    private static let chunkSize = 16 << 10
    private static let tail: [UInt8] = [0x00, 0x00, 0xFF, 0xFF]

    private let windowBits: Int32
    private let contextTakeover: Bool
    /// zlib keeps a pointer back to its stream, so it lives at one address.
    private let stream: UnsafeMutablePointer<z_stream>
    private var chunk: [UInt8]
    private var started = false
    /// The current message's deflate stream ended (BFINAL); its remaining bytes are ignored.
    private var streamEnded = false
    /// Why later messages cannot be inflated (window lost), once it happens.
    private var broken: String?

    /// - Parameters:
    ///   - windowBits: the sender's negotiated `*_max_window_bits` (8–15; 8 is read as 9, as zlib
    ///     compresses it).
    ///   - contextTakeover: false when the sender's `*_no_context_takeover` was negotiated.
    public init(windowBits: Int = 15, contextTakeover: Bool = true) {
        self.windowBits = Int32(min(15, max(9, windowBits)))
        self.contextTakeover = contextTakeover
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        chunk = [UInt8](repeating: 0, count: Self.chunkSize)
    }

    deinit {
        if started { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// Inflates the next compressed bytes of the current message into `output`, which never grows
    /// past `limit`; false when more output was due than that.
    public func inflate(_ compressed: ArraySlice<UInt8>, into output: inout [UInt8], limit: Int) throws(DecodingError)
        -> Bool
    {
        try run(compressed, into: &output, limit: limit)
    }

    /// Ends the current message (inflates the removed tail) and gets ready for the next.
    public func finishMessage(into output: inout [UInt8], limit: Int) throws(DecodingError) -> Bool {
        let complete = try run(Self.tail[...], into: &output, limit: limit)
        if complete { endMessage(kept: true) }
        return complete
    }

    /// Gives up the current message; with context takeover, the window is lost for good.
    public func abandonMessage() {
        endMessage(kept: false)
    }

    private func endMessage(kept: Bool) {
        if !kept, contextTakeover, broken == nil {
            broken = "an earlier compressed message was not inflated to its end, so its window is unknown"
        }
        // After a final block with context takeover the stream was already renewed, window kept.
        if started, !contextTakeover { _ = inflateReset(stream) }
        streamEnded = false
    }

    private func run(_ input: ArraySlice<UInt8>, into output: inout [UInt8], limit: Int) throws(DecodingError) -> Bool {
        if let broken { throw DecodingError.corrupt("permessage-deflate", broken) }
        try startIfNeeded()
        if streamEnded { return true }
        var input = input
        let status: Int32 = input.withUnsafeMutableBufferPointer { inputBuffer in
            stream.pointee.next_in = inputBuffer.baseAddress
            stream.pointee.avail_in = UInt32(inputBuffer.count)
            defer { stream.pointee.next_in = nil }
            while true {
                let (status, produced) = chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                    stream.pointee.next_out = chunkBuffer.baseAddress
                    stream.pointee.avail_out = UInt32(chunkBuffer.count)
                    let status = CZlib.inflate(stream, Z_SYNC_FLUSH)
                    return (status, chunkBuffer.count - Int(stream.pointee.avail_out))
                }
                let room = max(0, limit - output.count)
                output.append(contentsOf: chunk[0..<min(room, produced)])
                if produced > room { return Int32.min }
                switch status {
                case Z_STREAM_END: return Z_STREAM_END
                case Z_OK where stream.pointee.avail_in > 0 || stream.pointee.avail_out == 0: continue
                case Z_OK, Z_BUF_ERROR: return Z_OK  // all input taken, no output pending
                default: return status
                }
            }
        }
        switch status {
        case Z_OK:
            return true
        case Z_STREAM_END:
            try keepWindowAfterFinalBlock()
            return true
        case Int32.min:
            return false
        default:
            let detail = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
            throw DecodingError.corrupt("permessage-deflate", detail)
        }
    }

    private func startIfNeeded() throws(DecodingError) {
        guard !started else { return }
        // inflateInit2 is a macro; call the function it expands to.
        guard inflateInit2_(stream, -windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw DecodingError.corrupt("permessage-deflate", "zlib could not start")
        }
        started = true
    }

    /// The message ended its deflate stream: start a new one now, with the window carried over
    /// when the sender keeps context, so the next message may refer back to this one.
    private func keepWindowAfterFinalBlock() throws(DecodingError) {
        streamEnded = true
        guard contextTakeover else { return }
        var window = [UInt8](repeating: 0, count: 1 << 15)
        var length: UInt32 = 0
        let got = window.withUnsafeMutableBufferPointer { inflateGetDictionary(stream, $0.baseAddress, &length) }
        _ = inflateReset(stream)
        guard got == Z_OK, window.withUnsafeBufferPointer({ inflateSetDictionary(stream, $0.baseAddress, length) }) == Z_OK
        else { throw DecodingError.corrupt("permessage-deflate", "window lost after a final block") }
    }
}
