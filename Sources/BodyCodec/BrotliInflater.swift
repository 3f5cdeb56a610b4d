import CBrotli

/// br through Brotli's streaming decoder, checking the output limit as it grows.
enum BrotliInflater {
    static func inflate(_ input: [UInt8], limit: Int) throws(DecodingError) -> [UInt8] {
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else {
            throw .corrupt("br", "decoder could not start")
        }
        defer { BrotliDecoderDestroyInstance(state) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let outcome: Int = input.withUnsafeBufferPointer { inputBuffer in
            var availableIn = inputBuffer.count
            var nextIn = inputBuffer.baseAddress
            while true {
                var availableOut = chunk.count
                let result = chunk.withUnsafeMutableBufferPointer { chunkBuffer -> BrotliDecoderResult in
                    var nextOut = chunkBuffer.baseAddress
                    return BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
                }
                let produced = chunk.count - availableOut
                if output.count + produced > limit { return -1 }
                output.append(contentsOf: chunk[0..<produced])
                switch result {
                case BROTLI_DECODER_RESULT_SUCCESS: return 0
                case BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT: continue
                case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT: return 1
                default: return 2
                }
            }
        }
        switch outcome {
        case 0: return output
        case -1: throw .tooLarge("br", limit: limit)
        case 1: throw .corrupt("br", "truncated")
        default:
            let code = BrotliDecoderGetErrorCode(state)
            throw .corrupt("br", BrotliDecoderErrorString(code).map { String(cString: $0) } ?? "error")
        }
    }
}
