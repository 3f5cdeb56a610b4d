import CZstd

/// zstd through its streaming decoder, checking the output limit as it grows.
///
/// zstd frames usually carry no checksum, so flipped bytes inside one can decode to other bytes
/// undetected: a body that decodes is not proof it arrived intact.
enum ZstdInflater {
    static func inflate(_ input: [UInt8], limit: Int) throws(DecodingError) -> [UInt8] {
        guard let stream = ZSTD_createDStream() else { throw .corrupt("zstd", "decoder could not start") }
        defer { ZSTD_freeDStream(stream) }
        ZSTD_initDStream(stream)
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var failure: String?
        var lastHint = 1
        let tooLarge: Bool = input.withUnsafeBufferPointer { inputBuffer in
            var inBuffer = ZSTD_inBuffer(src: inputBuffer.baseAddress, size: inputBuffer.count, pos: 0)
            while true {
                var produced = 0
                let hint = chunk.withUnsafeMutableBufferPointer { chunkBuffer -> Int in
                    var outBuffer = ZSTD_outBuffer(dst: chunkBuffer.baseAddress, size: chunkBuffer.count, pos: 0)
                    let hint = ZSTD_decompressStream(stream, &outBuffer, &inBuffer)
                    produced = outBuffer.pos
                    return hint
                }
                if ZSTD_isError(hint) != 0 {
                    failure = String(cString: ZSTD_getErrorName(hint))
                    return false
                }
                if output.count + produced > limit { return true }
                output.append(contentsOf: chunk[0..<produced])
                lastHint = hint
                // Done when the input is used up and the decoder holds nothing more.
                if inBuffer.pos == inBuffer.size && produced < chunk.count { return false }
            }
        }
        if tooLarge { throw .tooLarge("zstd", limit: limit) }
        if let failure { throw .corrupt("zstd", failure) }
        if lastHint != 0 { throw .corrupt("zstd", "truncated") }
        return output
    }
}
