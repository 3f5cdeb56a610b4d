/// Builds ClientHello bytes field by field, for cases no real client sends: odd names,
/// broken vectors, oversized messages, unusual record splits.
struct ClientHelloBuilder {
    var legacyVersion: UInt16 = 0x0303
    var sessionID: [UInt8] = Array(repeating: 7, count: 32)
    var cipherSuites: [UInt8] = [0x13, 0x01, 0x13, 0x02]
    var compressionMethods: [UInt8] = [0]
    /// (type, data) pairs in order; nil leaves the extensions block out entirely.
    var extensions: [(type: UInt16, data: [UInt8])]? = []

    static func serverNameExtension(_ name: [UInt8], nameType: UInt8 = 0) -> (type: UInt16, data: [UInt8]) {
        let entry = [nameType] + lengthPrefixed16(name)
        return (0, lengthPrefixed16(entry))
    }

    static func serverNameExtension(_ name: String) -> (type: UInt16, data: [UInt8]) {
        serverNameExtension(Array(name.utf8))
    }

    static func alpnExtension(_ protocols: [String]) -> (type: UInt16, data: [UInt8]) {
        (16, lengthPrefixed16(protocols.flatMap { lengthPrefixed8(Array($0.utf8)) }))
    }

    static func supportedVersionsExtension(_ versions: [UInt16]) -> (type: UInt16, data: [UInt8]) {
        (43, lengthPrefixed8(versions.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }))
    }

    /// The ClientHello body (after the 4-byte handshake header).
    var body: [UInt8] {
        var bytes = [UInt8(legacyVersion >> 8), UInt8(legacyVersion & 0xFF)]
        bytes += Array(repeating: 0xAB, count: 32)  // random
        bytes += Self.lengthPrefixed8(sessionID)
        bytes += Self.lengthPrefixed16(cipherSuites)
        bytes += Self.lengthPrefixed8(compressionMethods)
        if let extensions {
            bytes += Self.lengthPrefixed16(extensions.flatMap { [UInt8($0.type >> 8), UInt8($0.type & 0xFF)] + Self.lengthPrefixed16($0.data) })
        }
        return bytes
    }

    /// The handshake message: type 1, a 24-bit length, the body.
    var handshakeMessage: [UInt8] {
        Self.handshakeMessage(body: body)
    }

    static func handshakeMessage(body: [UInt8]) -> [UInt8] {
        [1, UInt8(truncatingIfNeeded: body.count >> 16), UInt8(truncatingIfNeeded: body.count >> 8),
         UInt8(truncatingIfNeeded: body.count)] + body
    }

    /// The message in handshake records of at most `fragmentSize` bytes each.
    func records(fragmentSize: Int = 1 << 14, recordVersion: UInt16 = 0x0301) -> [UInt8] {
        Self.records(of: handshakeMessage, fragmentSizes: [fragmentSize], recordVersion: recordVersion)
    }

    /// `message` cut into handshake records whose sizes cycle through `fragmentSizes`.
    static func records(of message: [UInt8], fragmentSizes: [Int], recordVersion: UInt16 = 0x0301) -> [UInt8] {
        var output: [UInt8] = []
        var offset = 0
        var sizeIndex = 0
        while offset < message.count {
            let size = min(max(1, fragmentSizes[sizeIndex % fragmentSizes.count]), message.count - offset)
            sizeIndex += 1
            output += [22, UInt8(recordVersion >> 8), UInt8(recordVersion & 0xFF), UInt8(size >> 8), UInt8(size & 0xFF)]
            output += message[offset..<(offset + size)]
            offset += size
        }
        return output
    }

    static func lengthPrefixed8(_ bytes: [UInt8]) -> [UInt8] {
        [UInt8(truncatingIfNeeded: bytes.count)] + bytes
    }

    static func lengthPrefixed16(_ bytes: [UInt8]) -> [UInt8] {
        [UInt8(truncatingIfNeeded: bytes.count >> 8), UInt8(truncatingIfNeeded: bytes.count)] + bytes
    }
}
