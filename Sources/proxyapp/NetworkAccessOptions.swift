import Foundation
import ArgumentParser
import ProxyCore
import ProxyEngine

/// The `run` options that decide where the proxy listens and who may use it: `--listen`
/// (repeatable), `--lan`, `--auth`, `--auth-file`, `--allow-clients`, `--allow-internal`.
///
/// Listening anywhere but loopback without `--auth` or `--allow-clients` is refused before
/// anything starts: anyone on the network could otherwise use the proxy (and, through it, read
/// whatever the machine can reach). The decisions themselves are `ClientAccessPolicy`'s.
struct NetworkAccessOptions: ParsableArguments {
    @Option(help: ArgumentHelp("Address to listen on: HOST:PORT, HOST (port 8080), :PORT or PORT (loopback); "
                               + "repeat for more. Anything but loopback needs --auth or --allow-clients.",
                               valueName: "address"),
            transform: ListenAddress.parse)
    var listen: [ListenAddress] = []

    @Flag(help: ArgumentHelp("Listen on loopback and every network interface (Wi-Fi, Ethernet, hotspot), for devices "
                             + "on the LAN; the port is --listen's (default 8080). Needs --auth or --allow-clients."))
    var lan = false

    @Option(help: ArgumentHelp("A user name and password every client must give (HTTP Proxy-Authorization Basic); "
                               + "repeat for more users.", valueName: "user:pass"),
            transform: NetworkAccessOptions.parseCredential)
    var auth: [Credential] = []

    @Option(name: .customLong("auth-file"),
            help: ArgumentHelp("An htpasswd file of users with bcrypt passwords (htpasswd -B -c FILE USER); "
                               + "read at start. With or instead of --auth.", valueName: "file"))
    var authFile: String?

    @Option(name: .customLong("allow-clients"),
            help: ArgumentHelp("Networks whose clients may use the proxy from other machines, comma-separated CIDRs "
                               + "(192.168.1.0/24,10.0.0.7); repeatable. Loopback is always allowed.", valueName: "cidrs"),
            transform: NetworkAccessOptions.parseNetworks)
    var allowClients: [[IPNetwork]] = []

    @Flag(name: .customLong("allow-internal"),
          help: "Let clients from other machines reach this machine's own services (loopback, link-local, its own addresses).")
    var allowInternal = false

    struct Credential {
        var user: String
        var password: String
    }

    static func parseCredential(_ text: String) throws -> Credential {
        switch ProxyCredentials.parseEntry(text) {
        case .success(let entry): return Credential(user: entry.user, password: entry.password)
        case .failure(let error): throw ValidationError("\(error.reason).")
        }
    }

    static func parseNetworks(_ text: String) throws -> [IPNetwork] {
        let parts = text.split(separator: ",", omittingEmptySubsequences: false)
        return try parts.map { part in
            switch IPNetwork.parse(String(part)) {
            case .success(let network): return network
            case .failure(let error): throw ValidationError("\(error).")
            }
        }
    }

    /// The addresses `--listen` names, or the default.
    var listenAddresses: [ListenAddress] { listen.isEmpty ? [.default] : listen }

    /// Whether anything is listened on beyond loopback.
    var listensOffLoopback: Bool { lan || listenAddresses.contains { !$0.isLoopback } }

    func validate() throws {
        if authFile != nil { _ = try passwordFileEntries() }
        if listensOffLoopback && auth.isEmpty && authFile == nil && allowClients.isEmpty {
            let place = lan ? "--lan" : "listening on \(listenAddresses.first { !$0.isLoopback }?.host ?? "")"
            throw ValidationError("\(place) lets other machines use the proxy: pass --auth USER:PASS (clients then log in) "
                                  + "or --allow-clients CIDR (e.g. 192.168.1.0/24), or listen on 127.0.0.1 only.")
        }
        if lan, listen.count > 1 {
            throw ValidationError("--lan takes only the port of --listen: give at most one --listen (e.g. --lan --listen :9090).")
        }
    }

    /// The addresses to bind: `--lan`'s (loopback, then every interface address a device can
    /// use, on `--listen`'s port), or `--listen`'s, each once.
    func bindAddresses(interfaces: [LocalInterfaceAddress]) -> [ListenAddress] {
        guard lan else { return listenAddresses }
        let port = listen.first?.port ?? ListenAddress.defaultPort
        var addresses = [ListenAddress(host: "127.0.0.1", port: port)]
        for interface in LocalInterfaces.usableFromLAN(interfaces) {
            addresses.append(ListenAddress(host: interface.address.description, port: port))
        }
        return addresses
    }

    /// `--auth-file`'s users (none without it); a file that cannot be used is a message naming
    /// it, the line and the fix.
    func passwordFileEntries() throws -> [PasswordFile.Entry] {
        guard let authFile else { return [] }
        let text: String
        do {
            let data = try Data(contentsOf: URL(fileURLWithPath: authFile))
            guard data.count <= PasswordFile.maximumBytes, let decoded = String(data: data, encoding: .utf8) else {
                throw ValidationError("--auth-file \(authFile): not an htpasswd file (larger than 1 MiB or not UTF-8 text).")
            }
            text = decoded
        } catch let error as ValidationError {
            throw error
        } catch {
            throw ValidationError("--auth-file \(authFile): cannot read it (\(Self.readProblem(error))); "
                                  + "create it with: htpasswd -B -c \(authFile) USER.")
        }
        switch PasswordFile.parse(text) {
        case .success(let entries): return entries
        case .failure(let problem): throw ValidationError("--auth-file \(authFile): \(problem).")
        }
    }

    private static func readProblem(_ error: any Error) -> String {
        let code = (error as NSError).code
        if code == NSFileReadNoSuchFileError { return "no such file" }
        if code == NSFileReadNoPermissionError { return "permission denied" }
        return "not a readable file"
    }

    /// The access policy the engine enforces.
    func policy(interfaces: [LocalInterfaceAddress], bound: [ListenAddress]) -> ClientAccessPolicy {
        var policy = ClientAccessPolicy()
        for credential in auth { policy.credentials.add(user: credential.user, password: credential.password) }
        for entry in (try? passwordFileEntries()) ?? [] { policy.credentials.add(user: entry.user, bcryptHash: entry.hash) }
        policy.allowedClients = allowClients.flatMap { $0 }
        policy.allowsInternalDestinations = allowInternal
        policy.ownAddresses = Set(interfaces.map(\.address) + bound.compactMap { IPAddressBytes($0.host) })
        return policy
    }
}
