@testable import BodyCodec

/// Encoders for the decoder tests: `BodyEncoder`'s own C calls, plus raw deflate (which only
/// these tests need: some servers send it under `deflate`).
enum Compressors {
    /// zlib's deflate with the given window bits: 15 + 16 gzip, 15 zlib-wrapped, -15 raw.
    static func deflate(_ input: [UInt8], windowBits: Int32) -> [UInt8] {
        try! ZlibDeflater.deflate(input, windowBits: windowBits, name: "deflate")
    }

    static func gzip(_ input: [UInt8]) -> [UInt8] { try! BodyEncoder.encode(input, as: .gzip) }

    static func brotli(_ input: [UInt8]) -> [UInt8] { try! BodyEncoder.encode(input, as: .br) }

    static func zstd(_ input: [UInt8]) -> [UInt8] { try! BodyEncoder.encode(input, as: .zstd) }
}
