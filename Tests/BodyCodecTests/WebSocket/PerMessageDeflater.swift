import CZlib

/// A permessage-deflate sender for the tests, straight over zlib as browsers and servers use it:
/// raw deflate, each message flushed with Z_SYNC_FLUSH and its trailing 0x00 0x00 0xff 0xff
/// removed (RFC 7692 §7.2.1); the window kept across messages unless `contextTakeover` is false.
final class PerMessageDeflater {
    private let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
    private let contextTakeover: Bool

    init(windowBits: Int32 = 15, contextTakeover: Bool = true) {
        self.contextTakeover = contextTakeover
        stream.initialize(to: z_stream())
        precondition(deflateInit2_(stream, 6, Z_DEFLATED, -windowBits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                                   Int32(MemoryLayout<z_stream>.size)) == Z_OK)
    }

    deinit {
        deflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// One message's payload as sent with RSV1.
    func compress(_ message: [UInt8], final: Bool = false) -> [UInt8] {
        // zlib makes no progress on nothing after a flush; senders send an empty stored block's
        // first byte (RFC 7692 §7.2.3.6), which the appended tail completes.
        if message.isEmpty, !final { return [0x00] }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(stream, UInt(message.count))) + 64)
        var input = message
        let written = input.withUnsafeMutableBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer -> Int in
                stream.pointee.next_in = inputBuffer.baseAddress
                stream.pointee.avail_in = UInt32(inputBuffer.count)
                stream.pointee.next_out = outputBuffer.baseAddress
                stream.pointee.avail_out = UInt32(outputBuffer.count)
                let status = deflate(stream, final ? Z_FINISH : Z_SYNC_FLUSH)
                precondition(status == (final ? Z_STREAM_END : Z_OK) && stream.pointee.avail_in == 0)
                return outputBuffer.count - Int(stream.pointee.avail_out)
            }
        }
        var payload = Array(output[0..<written])
        if !final {
            precondition(payload.suffix(4) == [0x00, 0x00, 0xFF, 0xFF])
            payload.removeLast(4)
        }
        if final {
            // A sender that ends each message with a final block and keeps context starts the
            // next stream with the last 32 KiB as its dictionary (RFC 7692 §7.2.3.3).
            var window = [UInt8](repeating: 0, count: 1 << 15)
            var length: UInt32 = 0
            precondition(deflateGetDictionary(stream, &window, &length) == Z_OK)
            precondition(deflateReset(stream) == Z_OK)
            if contextTakeover { precondition(deflateSetDictionary(stream, window, length) == Z_OK) }
        } else if !contextTakeover {
            precondition(deflateReset(stream) == Z_OK)
        }
        return payload
    }
}
