import CZstd

/// zstd through its one-shot compressor (level 3, zstd's default) into a `ZSTD_compressBound` buffer.
enum ZstdCompressor {
    static func compress(_ input: [UInt8]) throws(BodyEncodingError) -> [UInt8] {
        var output = [UInt8](repeating: 0, count: ZSTD_compressBound(input.count))
        let size = ZSTD_compress(&output, output.count, input, input.count, 3)
        if ZSTD_isError(size) != 0 { throw .failed("zstd", String(cString: ZSTD_getErrorName(size))) }
        return Array(output[0..<size])
    }
}
