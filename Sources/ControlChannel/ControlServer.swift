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
/// one `ControlReply` line for each, in order; a line over `maximumLineBytes` (96 MiB: a `send`'s
/// body travels in it), or that is not a request, is answered with `ok: false` and a reason. Only
/// the proxy's owner can connect, so that bound is about mistakes, not attackers. Each connection
/// is served on a thread of its own (at most `maximumConnections`; one more is answered "busy"
/// and closed), and a connection silent for a minute is closed. Commands run on that thread: a
/// replay waits there, never on an event loop.
public final class ControlServer: Sendable {
    /// Runs one command; `cancellation` is cancelled when the client goes away meanwhile (a
    /// replay then stops sending).
    public typealias Handler = @Sendable (ControlRequest, ControlCancellation) -> ControlReply

    public let path: String
    private let listener: CInt
    private let handler: Handler
    private let connections = NIOLockedValueBox(0)
    private let stopped = NIOLockedValueBox(false)

    public static let maximumConnections = 8
    /// A `send` carries its body in base64: 64 MiB of body (what `send` reads) and its head fit.
    public static let maximumLineBytes = 96 << 20
    /// How long a line may take to arrive whole (and an idle connection stays open).
    let idleSeconds: Int
    static let writeSeconds = 30

    /// Why the channel could not be opened, in words (for the banner).
    public struct Unavailable: Error, CustomStringConvertible {
        public var description: String
    }

    /// Binds `path` (mode 0600) and starts accepting. A socket file left by a proxy that is gone
    /// is replaced; one another running proxy answers on is not (`Unavailable`).
    public init(path: String, idleSeconds: Int = 60, handler: @escaping Handler) throws {
        self.idleSeconds = idleSeconds
        if path.hasPrefix(ControlSocket.fallbackFolder) {
            mkdir(ControlSocket.fallbackFolder, 0o700)
            if let problem = ControlSocket.fallbackFolderProblem() { throw Unavailable(description: problem) }
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
        // Each line must arrive whole within the idle time (a byte a minute keeps no slot), and
        // a client that stops reading its replies is dropped after the write timeout.
        ControlSocket.setTimeout(client, seconds: 5, option: SO_RCVTIMEO)
        ControlSocket.setTimeout(client, seconds: Self.writeSeconds, option: SO_SNDTIMEO)
        var buffer: [UInt8] = []
        while let line = ControlSocket.readLine(client, buffer: &buffer, limit: Self.maximumLineBytes,
                                                deadline: ControlSocket.monotonicNanoseconds() + UInt64(idleSeconds) * 1_000_000_000) {
            if line.isEmpty { continue }
            let answer: ControlReply
            if let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(line)) {
                answer = run(request, for: client)
            } else {
                answer = .failure("not a control request: one JSON object per line, with a \"command\"")
            }
            guard reply(answer, to: client) else { return }
        }
        if buffer.count > Self.maximumLineBytes {
            reply(.failure("a control request longer than \(Self.maximumLineBytes >> 20) MiB was refused"), to: client)
        }
    }

    /// Runs `request` on a thread of its own while this one watches the client: when it hangs up
    /// (Ctrl-C on `proxyapp replay`), the command is cancelled.
    private func run(_ request: ControlRequest, for client: CInt) -> ControlReply {
        let cancellation = ControlCancellation()
        let answer = NIOLockedValueBox<ControlReply?>(nil)
        let done = DispatchSemaphore(value: 0)
        let handler = self.handler
        let worker = Thread {
            answer.withLockedValue { $0 = handler(request, cancellation) }
            done.signal()
        }
        worker.name = "proxyapp-control-command"
        worker.start()
        while done.wait(timeout: .now() + .milliseconds(200)) == .timedOut {
            if !cancellation.isCancelled, Self.hungUp(client) { cancellation.cancel() }
        }
        return answer.withLockedValue { $0 } ?? .failure("the command gave no answer")
    }

    /// Whether the client closed its end (`POLLRDHUP`: it shut down writing, or is gone).
    private static func hungUp(_ client: CInt) -> Bool {
        let readHangUp: Int16 = 0x2000  // POLLRDHUP (needs _GNU_SOURCE in C)
        var entry = pollfd(fd: client, events: readHangUp, revents: 0)
        guard poll(&entry, 1, 0) > 0 else { return false }
        return entry.revents & (readHangUp | Int16(POLLHUP) | Int16(POLLERR)) != 0
    }

    /// Refuses a peer of another user (`SO_PEERCRED`); nil when it is this process's user.
    static func peerRefusal(_ client: CInt) -> String? {
        guard let uid = ControlSocket.peerUID(client) else {
            return "the control channel could not tell who is connecting: refused"
        }
        guard uid == getuid() else {
            return "the control channel serves only the user running the proxy (uid \(getuid())), not uid \(uid)"
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

/// Set when the client of a running command went away: long commands (a replay) look at it
/// between steps and stop.
public final class ControlCancellation: Sendable {
    private let cancelled = NIOLockedValueBox(false)

    public init() {}

    public var isCancelled: Bool { cancelled.withLockedValue { $0 } }

    public func cancel() { cancelled.withLockedValue { $0 = true } }
}
