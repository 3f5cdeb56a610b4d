import CXXHash
import Foundation

/// Computes the name a captured body's file takes in `BodyFileStore`: the XXH3-128 of its bytes,
/// 32 lower-case hex digits, fed block by block as the body is captured.
///
/// The store used SHA-256 before: over a 10 MiB plain download it was 22 % of the proxy's CPU,
/// the largest single item, and it ran beside the relay on a 2-core machine. XXH3 (xxHash) is
/// about ten times faster here. It is not a cryptographic hash, and bodies come from anyone on
/// the network, so a name never decides on its own that two bodies are the same: the store
/// compares the bytes before it lets a second body share a file (`BodyFileStore.place`), and
/// gives a colliding body another name. Names made by SHA-256 (64 digits) stay readable.
final class BodyContentHasher {
    private let state: OpaquePointer

    init() {
        guard let state = XXH3_createState() else { fatalError("xxHash could not allocate its hashing state") }
        self.state = state
        XXH3_128bits_reset(state)
    }

    deinit {
        XXH3_freeState(state)
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
        XXH3_128bits_update(state, base, bytes.count)
    }

    func update(_ data: Data) {
        data.withUnsafeBytes { update($0) }
    }

    /// The name of the bytes fed so far: the hash's canonical (big-endian) form in hex.
    func name() -> String {
        let hash = XXH3_128bits_digest(state)
        return Self.hex(hash.high64) + Self.hex(hash.low64)
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: (0..<16).map { digits[Int((value >> UInt64(60 - 4 * $0)) & 0xF)] }, as: UTF8.self)
    }
}
