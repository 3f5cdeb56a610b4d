import ArgumentParser
import Foundation
import ProxyCore
import ProxyEngine
import QRCode

/// `proxyapp qr`: the CA page of a network address as a QR code, so a phone on the same
/// network opens it with its camera instead of typing the URL; `--png` saves it as an image.
struct QRCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "qr",
        abstract: "Show a QR code of the proxy's CA page for a phone on the network to scan.",
        discussion: """
            The page is http://ADDRESS:PORT/ on a proxy started with --lan (or --listen on that \
            address) and --auth or --allow-clients. Without --address, the first address of this \
            machine a device on the network can reach (Wi-Fi, Ethernet, hotspot; IPv4 first).
            """)

    @Option(help: "The address a phone reaches this machine at (default: the first usable interface address).")
    var address: String?

    @Option(help: "The proxy's port.")
    var port = 8080

    @Option(help: "Write the QR code to this PNG file instead of printing it.")
    var png: String?

    func validate() throws {
        guard (1...65535).contains(port) else { throw ValidationError("--port must be 1 to 65535 (got \(port)).") }
        if let address, IPAddressBytes(address) == nil {
            throw ValidationError("--address must be an IPv4 or IPv6 address, like 192.168.1.5 (got '\(address)').")
        }
    }

    func run() throws {
        let url = try Self.pageURL(address: address, port: port, interfaces: LocalInterfaces.all())
        let code: QRCode
        do {
            code = try QRCode(encoding: url)
        } catch {
            throw CLIError("cannot make a QR code of \(url): \(error.description)")
        }
        if let png {
            let bytes: [UInt8]
            do {
                bytes = try QRCodePNG.data(code)
            } catch {
                throw CLIError("cannot make the PNG: \(error.description)")
            }
            let file = URL(fileURLWithPath: png)
            do {
                try Data(bytes).write(to: file, options: .atomic)
            } catch {
                throw CLIError("cannot write \(png): \(Self.whyUnwritable(file)). Choose a writable path for --png.")
            }
            print("Wrote the QR code of \(url) to \(png)")
            return
        }
        print(Self.terminalText(code, colored: isatty(STDOUT_FILENO) == 1) + "\n" + url)
    }

    /// Why `file` could not be written, in words (Foundation's own text names no cause).
    static func whyUnwritable(_ file: URL) -> String {
        let folder = file.deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: folder, isDirectory: &isDirectory) {
            return "the folder \(folder) does not exist"
        }
        if !isDirectory.boolValue { return "\(folder) is not a folder" }
        if FileManager.default.fileExists(atPath: file.path, isDirectory: &isDirectory), isDirectory.boolValue {
            return "it is a folder"
        }
        if !FileManager.default.isWritableFile(atPath: folder) { return "the folder \(folder) is not writable" }
        return "the write failed (disk full?)"
    }

    /// `http://ADDRESS:PORT/` for the address given, or the first usable interface address.
    static func pageURL(address: String?, port: Int, interfaces: [LocalInterfaceAddress]) throws -> String {
        if let address, let ip = IPAddressBytes(address) {
            return "http://\(ip.isIPv4 ? ip.description : "[\(ip)]"):\(port)/"
        }
        let usable = LocalInterfaces.usableFromLAN(interfaces)
        guard let chosen = usable.first(where: \.address.isIPv4) ?? usable.first else {
            throw CLIError("this machine has no network address a phone can reach (only loopback or link-local). "
                           + "Join a Wi-Fi or Ethernet network, or name one with --address.")
        }
        return "http://\(chosen.urlHost):\(port)/"
    }

    /// The half-block lines; on a terminal drawn black on bright white (a dark terminal's own
    /// colours would invert the code, which cameras do not read).
    static func terminalText(_ code: QRCode, colored: Bool) -> String {
        let lines = code.halfBlockLines(quietZone: 2)
        guard colored else { return lines.joined(separator: "\n") }
        return lines.map { "\u{1B}[30;107m" + $0 + "\u{1B}[0m" }.joined(separator: "\n")
    }
}
