import ArgumentParser

/// `HOST:PORT` as given to `--listen` (`127.0.0.1:8080`, `[::1]:8080`, `0.0.0.0:8080`, or just a
/// port, which means loopback).
struct ListenAddress: ExpressibleByArgument, CustomStringConvertible {
    var host: String
    var port: Int

    init?(argument: String) {
        if let port = Int(argument) {
            guard (0...65535).contains(port) else { return nil }
            self.host = "127.0.0.1"
            self.port = port
            return
        }
        let hostPart: Substring
        let portPart: Substring
        if argument.hasPrefix("[") {
            guard let close = argument.firstIndex(of: "]") else { return nil }
            hostPart = argument[argument.index(after: argument.startIndex)..<close]
            let rest = argument[argument.index(after: close)...]
            guard rest.first == ":" else { return nil }
            portPart = rest.dropFirst()
        } else {
            guard let colon = argument.lastIndex(of: ":") else { return nil }
            hostPart = argument[..<colon]
            portPart = argument[argument.index(after: colon)...]
        }
        guard !hostPart.isEmpty, let port = Int(portPart), (0...65535).contains(port) else { return nil }
        self.host = String(hostPart)
        self.port = port
    }

    /// True for addresses only this machine can reach.
    var isLoopback: Bool {
        host == "localhost" || host == "::1" || host.hasPrefix("127.")
    }

    var description: String {
        host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }

    static var defaultCompletionKind: CompletionKind { .default }
}
