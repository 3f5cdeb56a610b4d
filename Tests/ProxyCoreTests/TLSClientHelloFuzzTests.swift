import ProxyCore
import SeededRandom
import XCTest

/// The ClientHello parser reads bytes from anyone who opens a tunnel: it must return, never
/// trap, on any input, and its answers must agree with each other. Deterministic (seeded), so a
/// failure reproduces; the iteration that failed is in the message.
final class TLSClientHelloFuzzTests: XCTestCase {
    private typealias Result = TLSClientHelloParser.Result

    /// Random bytes, half of them starting like a handshake record.
    func testRandomBytes() {
        var random = SeededRandom(seed: 0x5EED_0001)
        for iteration in 0..<60_000 {
            var bytes = random.bytes(Int.random(in: 0...600, using: &random))
            if iteration % 2 == 0, bytes.count >= 3 {
                bytes[0] = 22
                bytes[1] = 3
                bytes[2] = UInt8.random(in: 0...4, using: &random)
            }
            checkConsistency(bytes, iteration: iteration, random: &random)
        }
    }

    /// Real hellos with bit flips, length fields rewritten, bytes inserted, removed or cut.
    func testMutatedCapturedHellos() {
        var random = SeededRandom(seed: 0x5EED_0002)
        let seeds = CapturedClientHellos.all.map(\.bytes)
        for iteration in 0..<120_000 {
            var bytes = seeds[iteration % seeds.count]
            for _ in 0..<Int.random(in: 1...3, using: &random) {
                mutate(&bytes, random: &random)
            }
            checkConsistency(bytes, iteration: iteration, random: &random)
        }
    }

    /// The same handshake message re-cut into random record sizes always reads the same.
    func testRandomRecordSplitsReadTheSame() {
        var random = SeededRandom(seed: 0x5EED_0003)
        for (name, bytes) in CapturedClientHellos.all {
            guard case .clientHello(let expected) = TLSClientHelloParser.parse(bytes) else {
                return XCTFail("\(name) does not parse")
            }
            let message = handshakeMessage(of: bytes)
            for _ in 0..<300 {
                let sizes = (0..<8).map { _ in Int.random(in: 1...600, using: &random) }
                let resplit = ClientHelloBuilder.records(of: message, fragmentSizes: sizes)
                XCTAssertEqual(TLSClientHelloParser.parse(resplit), .clientHello(expected), "\(name) split as \(sizes)")
            }
        }
    }

    /// Checks what can be said about any answer: a host name is a DNS name, and a longer input
    /// never contradicts a shorter one (a refusal or a hello stands; a prefix only waits).
    private func checkConsistency(_ bytes: [UInt8], iteration: Int, random: inout SeededRandom) {
        let result = TLSClientHelloParser.parse(bytes)
        if case .clientHello(let hello) = result, let name = hello.serverName, !isLowercaseDNSName(name) {
            XCTFail("iteration \(iteration): server name '\(name)' is not a DNS name")
        }
        // Every hello the parser accepts has a well-formed fingerprint (hostile ones included).
        if case .clientHello(let hello) = result,
           !ClientHelloFingerprintTests.isWellFormed(ClientHelloFingerprint.of(hello)) {
            XCTFail("iteration \(iteration): fingerprint '\(ClientHelloFingerprint.of(hello))'")
        }
        // Fed in pieces, the incremental reader gives the same answer as the whole input.
        var reader = TLSClientHelloReader()
        var cut = 0
        while cut < bytes.count {
            let next = min(bytes.count, cut + Int.random(in: 1...max(1, bytes.count / 3), using: &random))
            reader.feed(bytes[cut..<next])
            cut = next
        }
        if reader.result != result {
            XCTFail("iteration \(iteration): fed in pieces gave \(reader.result), whole gave \(result)")
        }
        let prefix = Array(bytes.prefix(Int.random(in: 0...bytes.count, using: &random)))
        let prefixResult = TLSClientHelloParser.parse(prefix)
        if prefixResult != .needMoreData, prefixResult != result {
            XCTFail("iteration \(iteration): prefix of \(prefix.count) gave \(prefixResult), whole \(bytes.count) gave \(result)")
        }
        if result != .needMoreData {
            let extended = bytes + random.bytes(Int.random(in: 1...8, using: &random))
            let extendedResult = TLSClientHelloParser.parse(extended)
            if extendedResult != result {
                XCTFail("iteration \(iteration): more bytes changed \(result) to \(extendedResult)")
            }
        }
    }

    private func mutate(_ bytes: inout [UInt8], random: inout SeededRandom) {
        guard !bytes.isEmpty else { return bytes = [22] }
        let position = Int.random(in: 0..<bytes.count, using: &random)
        switch Int.random(in: 0..<7, using: &random) {
        case 0:  // flip one bit
            bytes[position] ^= 1 << UInt8.random(in: 0...7, using: &random)
        case 1:  // a random byte
            bytes[position] = UInt8.random(in: 0...255, using: &random)
        case 2:  // rewrite a 16-bit field, as a length: boundary values or off by a little
            guard position + 1 < bytes.count else { return }
            let current = Int(bytes[position]) << 8 | Int(bytes[position + 1])
            let candidates = [0, 1, 0xFFFF, 0x4000, 0x4001, current + 1, current - 1, current + 2, current - 2]
            let value = candidates[Int.random(in: 0..<candidates.count, using: &random)] & 0xFFFF
            bytes[position] = UInt8(value >> 8)
            bytes[position + 1] = UInt8(value & 0xFF)
        case 3:  // cut
            bytes.removeSubrange(position...)
        case 4:  // remove a range
            bytes.removeSubrange(position..<min(bytes.count, position + Int.random(in: 1...16, using: &random)))
        case 5:  // insert random bytes
            bytes.insert(contentsOf: random.bytes(Int.random(in: 1...16, using: &random)), at: position)
        default:  // duplicate a range
            let end = min(bytes.count, position + Int.random(in: 1...64, using: &random))
            bytes.insert(contentsOf: bytes[position..<end], at: end)
        }
    }

    /// The handshake message of a captured hello, its records' headers removed.
    private func handshakeMessage(of records: [UInt8]) -> [UInt8] {
        var message: [UInt8] = []
        var offset = 0
        while offset + 5 <= records.count {
            let length = Int(records[offset + 3]) << 8 | Int(records[offset + 4])
            message += records[(offset + 5)..<(offset + 5 + length)]
            offset += 5 + length
        }
        return message
    }

    /// An independent check of what the parser promises about `serverName`.
    private func isLowercaseDNSName(_ name: String) -> Bool {
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        return name.utf8.count <= 253 && labels.allSatisfy { label in
            (1...63).contains(label.utf8.count) && label.utf8.allSatisfy { byte in
                (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                    || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
            }
        }
    }
}
