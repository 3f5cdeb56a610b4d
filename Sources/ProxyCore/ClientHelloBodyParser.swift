/// Reads the body of a reassembled ClientHello handshake message (RFC 8446 §4.1.2) into a
/// `TLSClientHello`: the fixed fields are checked, the cipher suites and extension types kept
/// (for `ClientHelloFingerprint`), four extensions are read.
///
/// Returns nil for any structure a TLS server would refuse with `decode_error`; the caller
/// turns that into `.notTLS`.
enum ClientHelloBodyParser {
    /// A structure no ClientHello can have; only used inside this parser.
    private struct Malformed: Error {}

    static let serverNameExtension: UInt16 = 0
    static let alpnExtension: UInt16 = 16
    static let supportedVersionsExtension: UInt16 = 43
    static let signatureAlgorithmsExtension: UInt16 = 13
    static let hostNameType: UInt8 = 0

    static func parse(_ body: ArraySlice<UInt8>) -> TLSClientHello? {
        try? parseFields(body)
    }

    private static func parseFields(_ body: ArraySlice<UInt8>) throws(Malformed) -> TLSClientHello {
        var reader = TLSByteReader(body)
        guard let legacyVersion = reader.readUInt16(),
              reader.readBytes(32) != nil,  // random
              let sessionID = reader.readVector8(), sessionID.count <= 32,
              let cipherSuites = reader.readVector16(), cipherSuites.count >= 2, cipherSuites.count % 2 == 0,
              let compressionMethods = reader.readVector8(), compressionMethods.count >= 1
        else { throw Malformed() }
        var hello = TLSClientHello(
            serverName: nil, alpnProtocols: [], legacyVersion: legacyVersion, supportedVersions: [],
            cipherSuites: uint16s(cipherSuites)
        )
        if reader.isEmpty { return hello }  // no extensions at all: legal before TLS 1.3
        guard var extensions = reader.readVector16(), reader.isEmpty else { throw Malformed() }
        var seen: Set<UInt16> = []
        while !extensions.isEmpty {
            guard let type = extensions.readUInt16(), let data = extensions.readVector16(),
                  seen.insert(type).inserted
            else { throw Malformed() }
            hello.extensionTypes.append(type)
            switch type {
            case serverNameExtension:
                hello.serverName = try parseServerName(data)
            case alpnExtension:
                hello.alpnProtocols = try parseALPN(data)
            case supportedVersionsExtension:
                hello.supportedVersions = try parseSupportedVersions(data)
            case signatureAlgorithmsExtension:
                hello.signatureAlgorithms = signatureAlgorithms(data)
            default:
                continue
            }
        }
        return hello
    }

    /// `ServerNameList` (RFC 6066 §3): the first `host_name` entry, validated as a DNS name.
    /// Nil when the list holds no usable name.
    private static func parseServerName(_ extensionData: TLSByteReader) throws(Malformed) -> String? {
        var data = extensionData
        guard var list = data.readVector16(), data.isEmpty, !list.isEmpty else { throw Malformed() }
        var hostName: String?
        var sawHostName = false
        while !list.isEmpty {
            guard let nameType = list.readUInt8(), let name = list.readVector16() else { throw Malformed() }
            if nameType == hostNameType, !sawHostName {
                sawHostName = true
                hostName = DNSHostName.validated(name.remainingBytes)
            }
        }
        return hostName
    }

    /// `ProtocolNameList` (RFC 7301 §3.1): at least one name, none empty.
    private static func parseALPN(_ extensionData: TLSByteReader) throws(Malformed) -> [String] {
        var data = extensionData
        guard var list = data.readVector16(), data.isEmpty, !list.isEmpty else { throw Malformed() }
        var protocols: [String] = []
        while !list.isEmpty {
            guard let name = list.readVector8(), !name.isEmpty else { throw Malformed() }
            protocols.append(String(decoding: name.remainingBytes, as: UTF8.self))
        }
        return protocols
    }

    /// `supported_versions` in a ClientHello (RFC 8446 §4.2.1): 1 to 127 two-byte versions.
    private static func parseSupportedVersions(_ extensionData: TLSByteReader) throws(Malformed) -> [UInt16] {
        var data = extensionData
        guard let list = data.readVector8(), data.isEmpty, !list.isEmpty, list.count % 2 == 0 else {
            throw Malformed()
        }
        return uint16s(list)
    }

    /// `signature_algorithms` (RFC 8446 §4.2.3): two-byte schemes in a two-byte-length vector.
    /// Empty when malformed: only the fingerprint reads it, and the TLS library refuses such a hello.
    private static func signatureAlgorithms(_ extensionData: TLSByteReader) -> [UInt16] {
        var data = extensionData
        guard let list = data.readVector16(), data.isEmpty, list.count % 2 == 0 else { return [] }
        return uint16s(list)
    }

    /// The two-byte values of `vector` (an even number of bytes; a last odd byte is ignored).
    private static func uint16s(_ vector: TLSByteReader) -> [UInt16] {
        var list = vector
        var values: [UInt16] = []
        values.reserveCapacity(list.count / 2)
        while let value = list.readUInt16() {
            values.append(value)
        }
        return values
    }
}
