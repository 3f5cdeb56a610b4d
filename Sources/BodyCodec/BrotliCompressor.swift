import CBrotli

/// br through Brotli's one-shot encoder (quality 5, the common on-the-fly setting; 4 MiB window).
enum BrotliCompressor {
    static func compress(_ input: [UInt8]) throws(BodyEncodingError) -> [UInt8] {
        var size = BrotliEncoderMaxCompressedSize(input.count)
        // MaxCompressedSize is 0 when the input is too large to bound; give the encoder room anyway.
        if size == 0 { size = input.count + (input.count >> 2) + 1024 }
        var output = [UInt8](repeating: 0, count: size)
        let ok = BrotliEncoderCompress(5, 22, BROTLI_MODE_GENERIC, input.count, input, &size, &output)
        guard ok == BROTLI_TRUE else { throw .failed("br", "encoder refused the input") }
        return Array(output[0..<size])
    }
}
