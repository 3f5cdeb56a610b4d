import ArgumentParser
import Foundation
import ProxyTLS

/// `proxyapp ca export`: the certificate (never the key) in the form a client's trust store takes.
struct CAExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export", abstract: "Write the root CA certificate (not its key) to stdout or a file.")

    /// PEM for Linux tools and most trust stores; DER (`.cer`) for Android, Windows and some browsers.
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case pem, der
    }

    @OptionGroup var data: DataDirectoryOptions

    @Option(help: "pem or der.")
    var format: Format = .pem

    @Option(help: "Write to this file instead of stdout.")
    var out: String?

    func run() throws {
        try Self.checkDestination(format: format, out: out, stdoutIsTerminal: isatty(STDOUT_FILENO) != 0)
        let authority = try data.loadOrCreateAuthority()
        let bytes = Self.bytes(of: authority, as: format)
        guard let out else {
            FileHandle.standardOutput.write(Data(bytes))
            return
        }
        do { try Data(bytes).write(to: URL(fileURLWithPath: out), options: .atomic) } catch {
            throw CLIError("cannot write --out \(out): \(error.localizedDescription)")
        }
        StandardError.print("Wrote the root CA certificate (\(format.rawValue.uppercased())) to \(out).")
    }

    static func bytes(of authority: CertificateAuthority, as format: Format) -> [UInt8] {
        switch format {
        case .pem: return Array(authority.certificatePEM.utf8)
        case .der: return authority.certificateDER
        }
    }

    /// Binary DER would garble a terminal: it needs --out (or a pipe).
    static func checkDestination(format: Format, out: String?, stdoutIsTerminal: Bool) throws {
        if format == .der, out == nil, stdoutIsTerminal {
            throw CLIError("DER is binary and stdout is a terminal: pass --out FILE (e.g. --out ProxyCA.cer), redirect stdout, or use --format pem.")
        }
    }
}
