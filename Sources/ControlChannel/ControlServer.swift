import Foundation
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#endif

/// The running proxy's end of the control channel: a Unix socket through which `proxyapp replay`,
/// `proxyapp send` and a `proxyapp tui` attached from another terminal act on this proxy.
///
/// Why a socket and not the capture file: acting (sending a request, later releasing a held
/// one) needs the engine, which only the proxy's process has. Why Unix and not TCP: the file's
/// mode (0600, in the 0700 data directory) and the kernel's peer credentials (`SO_PEERCRED`:
/// another user's connection is refused, root's too) keep it to the proxy's owner; nothing
/// listens on the network.
///
/// Protocol: newline-delimited JSON. The client writes one `ControlRequest` per line and reads
/// one `ControlReply` line for each, in order; a line over 1 MiB, or that is not a request, is
/// answered with `ok: false` and a reason. Each connection is served on a thread of its own (at
/// most `maximumConnections`; one more is answered "busy" and closed), and a connection silent
/// for a minute is closed. Commands run on that thread: a replay waits there, never on an event
/// loop.
public final class ControlServer: Sendable {
    public typealias Handler = @Sendable (ControlRequest) -> ControlReply

    public let path: String
    private let listener: CInt
    private let handler: Handler
    private let connections = NIOLockedValueBox(0)
    private let stopped = NIOLockedValueBox(false)

    public static let maximumConnections = 8
    static let maximumLineBytes = 1 << 20
    static let idleSeconds = 60

    /// Why the channel could not be opened, in words (for the banner).
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    /// Binds `path` (mode 0600) and starts accepting. A socket file left by a proxy that is gone
    /// is replaced; one another running proxy answers on is not (`Unavailable`).
    public init(path: String, handler: @escaping Handler) throws {
        if path.hasPrefix(ControlSocket.fallbackFolder) {
            mkdir(ControlSocket.fallbackFolder, 0o700)
            var info = stat()
            guard lstat(ControlSocket.fallbackFolder, &info) == 0, info.st_uid == getuid(),
                  info.st_mode & S_IFMT == S_IFDIR, info.st_mode & 0o077 == 0 else {
                throw Unavailable(description: "\(ControlSocket.fallbackFolder) is not a private folder of this user")
            }
        }
        if ControlClient.isAnswering(path: path) {
            throw Unavailable(description: "another proxy on this data directory has it (\(path))")
        }
        unlink(path)
        let descriptor = socket(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw Unavailable(description: "no socket: \(String(cString: strerror(errno)))") }
        let previousMask = umask(0o177)  // the file is created 0600, never briefly wider
        let bound = ControlSocket.withAddress(path) { bind(descriptor, $0, $1) }
        umask(previousMask)
        guard bound == 0, listen(descriptor, 16) == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw Unavailable(description: "cannot listen on \(path): \(reason)")
        }
        chmod(path, 0o600)
        self.path = path
        self.listener = descriptor
        self.handler = handler
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "proxyapp-control"
        thread.start()
    }

    /// Stops accepting and removes the socket file; commands running finish on their threads.
    public func stop() {
        let already = stopped.withLockedValue { value -> Bool in
            defer { value = true }
            return value
        }
        guard !already else { return }
        shutdown(listener, CInt(SHUT_RDWR))
        unlink(path)
    }

    private func acceptLoop() {
        while !stopped.withLockedValue({ $0 }) {
            let client = accept(listener, nil, nil)
            if client >= 0 { _ = fcntl(client, F_SETFD, FD_CLOEXEC) }
            if client < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                if errno == EMFILE || errno == ENFILE { usleep(100_000); continue }
                break
            }
            let admitted = connections.withLockedValue { count -> Bool in
                guard count < Self.maximumConnections else { return false }
                count += 1
                return true
            }
            guard admitted else {
                reply(.failure("the control channel is busy (\(Self.maximumConnections) connections): try again"), to: client)
                close(client)
                continue
            }
            let thread = Thread { [self] in
                serve(client)
                close(client)
                connections.withLockedValue { $0 -= 1 }
            }
            thread.name = "proxyapp-control-connection"
            thread.start()
        }
        close(listener)
    }

    private func serve(_ client: CInt) {
        if let refusal = Self.peerRefusal(client) {
            reply(.failure(refusal), to: client)
            return
        }
        ControlSocket.setTimeout(client, seconds: Self.idleSeconds, option: SO_RCVTIMEO)
        var buffer: [UInt8] = []
        while let line = ControlSocket.readLine(client, buffer: &buffer, limit: Self.maximumLineBytes) {
            if line.isEmpty { continue }
            let answer: ControlReply
            if let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(line)) {
                answer = handler(request)
            } else {
                answer = .failure("not a control request: one JSON object per line, with a \"command\"")
            }
            guard reply(answer, to: client) else { return }
        }
        if buffer.count > Self.maximumLineBytes {
            reply(.failure("a control request longer than 1 MiB was refused"), to: client)
        }
    }

    /// Refuses a peer of another user (`SO_PEERCRED`); nil when it is this process's user.
    static func peerRefusal(_ client: CInt) -> String? {
        var credentials = PeerCredentials()
        var length = socklen_t(MemoryLayout<PeerCredentials>.size)
        guard getsockopt(client, SOL_SOCKET, PeerCredentials.option, &credentials, &length) == 0 else {
            return "the control channel could not tell who is connecting: refused"
        }
        guard credentials.uid == getuid() else {
            return "the control channel serves only the user running the proxy (uid \(getuid())), not uid \(credentials.uid)"
        }
        return nil
    }

    @discardableResult
    private func reply(_ reply: ControlReply, to client: CInt) -> Bool {
        guard var data = try? JSONEncoder().encode(reply) else { return false }
        data.append(UInt8(ascii: "\n"))
        return ControlSocket.writeAll(client, [UInt8](data))
    }
}

/// Linux's `struct ucred` (glibc shows it only with `_GNU_SOURCE`, which Swift's Glibc module
/// does not set): the peer's pid, uid and gid, as `SO_PEERCRED` fills it.
struct PeerCredentials {
    var pid: Int32 = 0
    var uid: UInt32 = 0
    var gid: UInt32 = 0

    /// `SO_PEERCRED` (asm-generic/socket.h).
    static let option: CInt = 17
}
