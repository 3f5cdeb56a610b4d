/// What crossed the wire during one TLS handshake with a client, in order: whether and when our
/// certificate went out, and what the client sent after it. Pure; `HandshakeWireRecorder` feeds
/// it from the channel and `HandshakeFailureClassifier` reads it.
///
/// It exists because an error alone does not say whether the client ever saw our certificate.
/// A client can send its ClientHello and a junk record (or an alert) in one packet: our server
/// reads both, answers the hello, then fails on the junk exactly as it would on a rejection,
/// yet the client rejected nothing. Only a failure that comes after the client *received* our
/// certificate says something about the certificate. Here "received" means, precisely:
///
/// 1. our certificate went out: the write carrying our certificate flight completed (the bytes
///    were handed to the kernel). The flight is recognised in our own bytes: on TLS 1.2 and
///    older, the write holding the `ServerHelloDone` that ends the flight with our plaintext
///    `Certificate` (a flight without a `Certificate` message does not count); on TLS 1.3, the
///    write holding the first encrypted record after a `ServerHello` that is not a
///    HelloRetryRequest (BoringSSL writes EncryptedExtensions, Certificate, CertificateVerify and
///    Finished as one flight, in one write). Our server context is built per connection, so no
///    session is ever resumed and every full flight holds a certificate.
/// 2. the client answered it: at least one record *started* after that moment (bytes read
///    earlier, or a record already in progress then, were sent before the client could have
///    read the certificate); an end of input counts only if it arrived after that moment too.
///
/// Bytes held before the TLS handler existed (the tunnel's sniffer hands them over after our
/// certificate flight may already be written) are still read before it: the recorder sees them
/// before the TLS handler does. An end of input the sniffer held is passed in as already seen.
public struct HandshakeWireEvidence: Sendable {
    /// The TLS version of our certificate flight.
    public enum Version: String, Sendable {
        case tls10 = "TLS 1.0", tls11 = "TLS 1.1", tls12 = "TLS 1.2", tls13 = "TLS 1.3"
    }

    /// One record the client started after our certificate went out.
    public enum ClientRecord: Sendable, Equatable, CustomStringConvertible {
        case changeCipherSpec
        /// An unencrypted alert: level (1 warning, 2 fatal) and description (RFC 8446 §6).
        case alert(level: UInt8, description: UInt8)
        case handshake
        /// An encrypted record (TLS 1.3 handshake messages and alerts all look like this).
        case encrypted
        case other(contentType: UInt8)

        public var description: String {
            switch self {
            case .changeCipherSpec: return "change_cipher_spec"
            case .alert(let level, let description):
                let name = HandshakeFailureClassifier.alertName(description) ?? "alert \(description)"
                return "\(level == 2 ? "fatal" : "warning") \(name) alert (unencrypted)"
            case .handshake: return "handshake record"
            case .encrypted: return "encrypted record"
            case .other(let type): return "record of content type \(type)"
            }
        }
    }

    /// The version of our certificate flight once its write completed; nil until then.
    public private(set) var certificateSent: Version?
    /// Records the client started after `certificateSent` was set, in order (the first few).
    public private(set) var clientRecordsAfterCertificate: [ClientRecord] = []
    /// How many records the client started after our certificate went out.
    public private(set) var clientRecordCountAfterCertificate = 0
    /// The client's input ended (EOF, reset) before our certificate went out.
    public private(set) var clientEndedBeforeCertificate = false
    /// The client's input ended, at any time.
    public private(set) var clientEnded = false

    private static let recordsKept = 4

    // Our side.
    private var serverRecords = TLSRecordScanner()
    private var serverMessages = HandshakeMessageScanner()
    /// The legacy_version of our ServerHello, once read; nil while none (or only a
    /// HelloRetryRequest). 0x0303 is TLS 1.2 or 1.3: what follows it tells which.
    private var serverHelloVersion: UInt16?
    /// Our flight's version, once its last bytes are in a write that has not completed yet.
    private var pendingFlight: Version?

    // The client's side.
    private var clientRecords = TLSRecordScanner()
    /// The payload bytes of the alert record in progress (level, description).
    private var alertBytes: [UInt8] = []
    /// True while the client's record in progress started before our certificate went out.
    private var clientRecordStartedBefore = false

    public init() {}

    // MARK: our bytes

    /// Reads bytes our TLS server is writing. Returns true when this write ends the flight that
    /// carries our certificate: the caller then reports `certificateWriteCompleted()` once the
    /// write succeeded.
    public mutating func serverWrote(_ bytes: some Sequence<UInt8>) -> Bool {
        guard certificateSent == nil, pendingFlight == nil else { return false }
        var flight: Version?
        var records = serverRecords
        var messages = serverMessages
        var helloVersion = serverHelloVersion
        records.scan(bytes, wantsPayload: { $0 == TLSRecordScanner.ContentType.handshake }) { step in
            guard flight == nil else { return }
            switch step {
            case .header(let type, _):
                // TLS 1.3 encrypts everything after the ServerHello, our certificate included.
                if type == TLSRecordScanner.ContentType.applicationData, helloVersion == 0x0303 {
                    flight = .tls13
                }
            case .payload(_, let byte):
                switch messages.read(byte) {
                case .serverHello(let legacyVersion, let isRetryRequest)?:
                    helloVersion = isRetryRequest ? nil : legacyVersion
                case .serverHelloDone?:
                    // TLS 1.2 and older: a plaintext flight, ServerHello … Certificate … ServerHelloDone.
                    let versions: [UInt16: Version] = [0x0301: .tls10, 0x0302: .tls11, 0x0303: .tls12]
                    if messages.sawCertificate, let version = helloVersion.flatMap({ versions[$0] }) { flight = version }
                case nil:
                    break
                }
            }
        }
        serverRecords = records
        serverMessages = messages
        serverHelloVersion = helloVersion
        pendingFlight = flight
        return flight != nil
    }

    /// The write that `serverWrote` said ends our certificate flight has completed.
    public mutating func certificateWriteCompleted() {
        guard let pendingFlight, certificateSent == nil else { return }
        certificateSent = pendingFlight
        // A record the client is in the middle of began before it could have read the certificate.
        clientRecordStartedBefore = !clientRecords.atRecordBoundary
    }

    // MARK: the client's bytes

    /// Reads bytes the client sent, before our TLS server processes them.
    public mutating func clientSent(_ bytes: some Sequence<UInt8>) {
        var records = clientRecords
        records.scan(bytes, wantsPayload: { $0 == TLSRecordScanner.ContentType.alert }) { step in
            switch step {
            case .header(let type, _):
                alertBytes = []
                clientRecordStartedBefore = certificateSent == nil
                guard !clientRecordStartedBefore else { return }
                clientRecordCountAfterCertificate += 1
                switch type {
                case TLSRecordScanner.ContentType.alert: break  // kept once its two bytes are read
                case TLSRecordScanner.ContentType.changeCipherSpec: keep(.changeCipherSpec)
                case TLSRecordScanner.ContentType.handshake: keep(.handshake)
                case TLSRecordScanner.ContentType.applicationData: keep(.encrypted)
                default: keep(.other(contentType: type))
                }
            case .payload(_, let byte):
                guard !clientRecordStartedBefore, alertBytes.count < 2 else { return }
                alertBytes.append(byte)
                if alertBytes.count == 2 { keep(.alert(level: alertBytes[0], description: alertBytes[1])) }
            }
        }
        clientRecords = records
    }

    /// The client's input ended (EOF, reset, the connection closed).
    public mutating func clientInputEnded() {
        guard !clientEnded else { return }
        clientEnded = true
        clientEndedBeforeCertificate = certificateSent == nil
    }

    private mutating func keep(_ record: ClientRecord) {
        if clientRecordsAfterCertificate.count < Self.recordsKept { clientRecordsAfterCertificate.append(record) }
    }

    /// The first record the client started after our certificate, not counting a
    /// change_cipher_spec (TLS 1.3 clients may send one for middlebox compatibility).
    public var firstClientRecordAfterCertificate: ClientRecord? {
        clientRecordsAfterCertificate.first { $0 != .changeCipherSpec }
    }

    /// One line for a pin's evidence: what went out and what came back.
    public var summary: String {
        guard let certificateSent else { return "our certificate was never sent" }
        let records = clientRecordsAfterCertificate.map(\.description).joined(separator: ", ")
        let more = clientRecordCountAfterCertificate > clientRecordsAfterCertificate.count ? ", …" : ""
        return "our certificate was sent (\(certificateSent.rawValue)); after it the client sent "
            + (records.isEmpty ? "nothing" : records + more)
            + (clientEnded && !clientEndedBeforeCertificate ? " and closed" : "")
    }
}

/// Splits the plaintext handshake messages of our own records (type, 24-bit length, body) and
/// reports the two that matter: the `ServerHello` (its version and whether it is a
/// HelloRetryRequest) and the `ServerHelloDone` ending a TLS 1.2 flight; it notes a
/// `Certificate` on the way.
struct HandshakeMessageScanner: Sendable {
    enum Event: Equatable {
        case serverHello(legacyVersion: UInt16, isRetryRequest: Bool)
        case serverHelloDone
    }

    /// SHA-256("HelloRetryRequest"): the `random` of a HelloRetryRequest (RFC 8446 §4.1.3).
    static let helloRetryRequestRandom: [UInt8] = [
        0xCF, 0x21, 0xAD, 0x74, 0xE5, 0x9A, 0x61, 0x11, 0xBE, 0x1D, 0x8C, 0x02, 0x1E, 0x65, 0xB8, 0x91,
        0xC2, 0xA2, 0x11, 0x16, 0x7A, 0xBB, 0x8C, 0x5E, 0x07, 0x9E, 0x09, 0xE2, 0xC8, 0xA8, 0x33, 0x9C,
    ]
    private static let serverHello: UInt8 = 2
    private static let certificate: UInt8 = 11
    private static let serverHelloDone: UInt8 = 14
    /// legacy_version (2) and random (32).
    private static let serverHelloPrefix = 34

    private var header: [UInt8] = []
    private var remaining = 0
    private var type: UInt8 = 0
    private var body: [UInt8] = []
    private(set) var sawCertificate = false

    mutating func read(_ byte: UInt8) -> Event? {
        if remaining == 0 && header.count < 4 {
            header.append(byte)
            guard header.count == 4 else { return nil }
            type = header[0]
            remaining = Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
            header = []
            body = []
            if type == Self.certificate { sawCertificate = true }
            return remaining == 0 && type == Self.serverHelloDone ? .serverHelloDone : nil
        }
        remaining -= 1
        if type == Self.serverHello, body.count < Self.serverHelloPrefix {
            body.append(byte)
            if body.count == Self.serverHelloPrefix { return helloEvent() }
        }
        return nil
    }

    private func helloEvent() -> Event {
        .serverHello(legacyVersion: UInt16(body[0]) << 8 | UInt16(body[1]),
                     isRetryRequest: Array(body[2..<34]) == Self.helloRetryRequestRandom)
    }
}
