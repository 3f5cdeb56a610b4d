import CZlib

/// gzip and deflate (zlib-wrapped) through zlib's one-shot deflate into a buffer sized by
/// `deflateBound`, so one `Z_FINISH` call always completes.
enum ZlibDeflater {
    /// 15-bit window with the gzip wrapper (`Content-Encoding: gzip`).
    static let gzipWindowBits: Int32 = 15 + 16
    /// 15-bit window with the zlib wrapper (RFC 9110's `deflate`).
    static let zlibWindowBits: Int32 = 15

    /// Deflates `input` at the default level; `windowBits` picks the wrapper as in
    /// `deflateInit2` (negative: raw deflate, which only tests need).
    static func deflate(_ input: [UInt8], windowBits: Int32, name: String) throws(BodyEncodingError) -> [UInt8] {
        var stream = z_stream()
        // deflateInit2 is a macro; call the function it expands to.
        guard deflateInit2_(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY,
                            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .failed(name, "zlib could not start")
        }
        defer { deflateEnd(&stream) }
        // deflateBound covers the zlib wrapper; the gzip one is 12 bytes longer.
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))) + 32)
        var input = input
        let (status, written) = input.withUnsafeMutableBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer -> (Int32, Int) in
                stream.next_in = inputBuffer.baseAddress
                stream.avail_in = UInt32(inputBuffer.count)
                stream.next_out = outputBuffer.baseAddress
                stream.avail_out = UInt32(outputBuffer.count)
                let status = CZlib.deflate(&stream, Z_FINISH)
                return (status, outputBuffer.count - Int(stream.avail_out))
            }
        }
        guard status == Z_STREAM_END else { throw .failed(name, "zlib status \(status)") }
        return Array(output[0..<written])
    }
}
