/// Reads the body of a reassembled ClientHello handshake message (RFC 8446 §4.1.2) into a
/// `TLSClientHello`: the fixed fields are checked and skipped, three extensions are read.
///
/// Returns nil for any structure a TLS server would refuse with `decode_error`; the caller
/// turns that into `.notTLS`.
enum ClientHelloBodyParser {
    /// A structure no ClientHello can have; only used inside this parser.
    private struct Malformed: Error {}

    static let serverNameExtension: UInt16 = 0
    static let alpnExtension: UInt16 = 16
    static let supportedVersionsExtension: UInt16 = 43
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
            serverName: nil, alpnProtocols: [], legacyVersion: legacyVersion, supportedVersions: []
        )
        if reader.isEmpty { return hello }  // no extensions at all: legal before TLS 1.3
        guard var extensions = reader.readVector16(), reader.isEmpty else { throw Malformed() }
        var seen: Set<UInt16> = []
        while !extensions.isEmpty {
            guard let type = extensions.readUInt16(), let data = extensions.readVector16(),
                  seen.insert(type).inserted
            else { throw Malformed() }
            switch type {
            case serverNameExtension:
                hello.serverName = try parseServerName(data)
            case alpnExtension:
                hello.alpnProtocols = try parseALPN(data)
            case supportedVersionsExtension:
                hello.supportedVersions = try parseSupportedVersions(data)
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
        guard var list = data.readVector8(), data.isEmpty, !list.isEmpty, list.count % 2 == 0 else {
            throw Malformed()
        }
        var versions: [UInt16] = []
        while let version = list.readUInt16() {
            versions.append(version)
        }
        return versions
    }
}
