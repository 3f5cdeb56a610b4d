import CBrotli
import CZlib
import CZstd

/// Encoders for the tests, straight from the C libraries the decoders use (shared by the
/// BodyCodec and FlowExport tests).
public enum Compressors {
    /// zlib's deflate with the given window bits: 15 + 16 gzip, 15 zlib-wrapped, -15 raw.
    public static func deflate(_ input: [UInt8], windowBits: Int32) -> [UInt8] {
        var stream = z_stream()
        precondition(deflateInit2_(&stream, 6, Z_DEFLATED, windowBits, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                                   Int32(MemoryLayout<z_stream>.size)) == Z_OK)
        defer { deflateEnd(&stream) }
        var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(input.count))) + 64)
        var input = input
        let written = input.withUnsafeMutableBufferPointer { inputBuffer in
            output.withUnsafeMutableBufferPointer { outputBuffer -> Int in
                stream.next_in = inputBuffer.baseAddress
                stream.avail_in = UInt32(inputBuffer.count)
                stream.next_out = outputBuffer.baseAddress
                stream.avail_out = UInt32(outputBuffer.count)
                precondition(CZlib.deflate(&stream, Z_FINISH) == Z_STREAM_END)
                return outputBuffer.count - Int(stream.avail_out)
            }
        }
        return Array(output[0..<written])
    }

    public static func gzip(_ input: [UInt8]) -> [UInt8] { deflate(input, windowBits: 15 + 16) }

    public static func brotli(_ input: [UInt8]) -> [UInt8] {
        var size = BrotliEncoderMaxCompressedSize(input.count) + 64
        var output = [UInt8](repeating: 0, count: size)
        let ok = BrotliEncoderCompress(5, 22, BROTLI_MODE_GENERIC, input.count, input, &size, &output)
        precondition(ok == BROTLI_TRUE)
        return Array(output[0..<size])
    }

    public static func zstd(_ input: [UInt8]) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(input.count))
        let size = ZSTD_compress(&output, output.count, input, input.count, 3)
        precondition(ZSTD_isError(size) == 0)
        return Array(output[0..<size])
    }
}
