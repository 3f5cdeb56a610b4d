import ChildProcess
import Foundation

/// A self-signed P-256 certificate for `localhost` and its key, made with `openssl req` in a test's
/// directory: for origins run by other programs (Python's gRPC and WebSocket servers) that the
/// proxy trusts through `--upstream-ca`.
struct SelfSignedCertificate {
    let certificate: URL
    let key: URL

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func make(in directory: URL, name: String = "origin") async throws -> SelfSignedCertificate {
        let made = SelfSignedCertificate(certificate: directory.appendingPathComponent("\(name).pem"),
                                         key: directory.appendingPathComponent("\(name)-key.pem"))
        let result = try await ChildProcess.run(
            "/usr/bin/openssl",
            ["req", "-x509", "-nodes", "-days", "2", "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
             "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-keyout", made.key.path, "-out", made.certificate.path],
            timeout: 30)
        guard result.exitCode == 0 else {
            throw Failure(description: "openssl req failed: \(String(decoding: result.stderr, as: UTF8.self))")
        }
        return made
    }
}
