import CZlib

/// gzip and deflate through zlib's streaming inflate, in fixed-size steps so the output limit
/// is checked as it grows.
enum ZlibInflater {
    enum Format {
        case gzipOrZlib, zlib, raw

        var windowBits: Int32 {
            switch self {
            case .gzipOrZlib: return 15 + 32  // auto-detects the gzip or zlib header
            case .zlib: return 15
            case .raw: return -15
            }
        }
    }

    static func inflate(_ input: [UInt8], format: Format, limit: Int, name: String) throws(DecodingError) -> [UInt8] {
        var stream = z_stream()
        // inflateInit2 is a macro; call the function it expands to.
        guard inflateInit2_(&stream, format.windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw .corrupt(name, "zlib could not start")
        }
        defer { inflateEnd(&stream) }
        var output: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        var input = input
        let result: Int32 = input.withUnsafeMutableBufferPointer { inputBuffer in
            stream.next_in = inputBuffer.baseAddress
            stream.avail_in = UInt32(inputBuffer.count)
            while true {
                let status: Int32 = chunk.withUnsafeMutableBufferPointer { chunkBuffer in
                    stream.next_out = chunkBuffer.baseAddress
                    stream.avail_out = UInt32(chunkBuffer.count)
                    return CZlib.inflate(&stream, Z_NO_FLUSH)
                }
                let produced = chunk.count - Int(stream.avail_out)
                if output.count + produced > limit { return Int32.min }
                output.append(contentsOf: chunk[0..<produced])
                switch status {
                case Z_STREAM_END: return Z_STREAM_END
                case Z_OK: continue
                case Z_BUF_ERROR where stream.avail_in == 0: return Z_BUF_ERROR  // input ended early
                default: return status
                }
            }
        }
        switch result {
        case Z_STREAM_END: return output
        case Int32.min: throw .tooLarge(name, limit: limit)
        case Z_BUF_ERROR: throw .corrupt(name, "truncated")
        default:
            let message = stream.msg.map { String(cString: $0) } ?? "zlib error \(result)"
            throw .corrupt(name, message)
        }
    }
}
