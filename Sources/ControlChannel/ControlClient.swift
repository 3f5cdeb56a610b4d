import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The other end of a running proxy's control channel (`ControlServer`): what `proxyapp replay`,
/// `proxyapp send` and an attached `proxyapp tui` use to act on that proxy.
///
/// Blocking by design: its callers are a CLI's main task and the TUI's worker threads.
public enum ControlClient {
    /// Why a command could not reach the proxy or got no answer, in words.
    public struct Failure: Error, CustomStringConvertible {
        public var description: String
    }

    /// Whether a proxy answers on `path` now.
    public static func isAnswering(path: String) -> Bool {
        guard let descriptor = try? connect(path: path) else { return false }
        close(descriptor)
        return true
    }

    /// Sends `request` and waits up to `timeoutSeconds` for its reply.
    public static func send(_ request: ControlRequest, path: String, timeoutSeconds: Int = 900) throws -> ControlReply {
        let descriptor = try connect(path: path)
        defer { close(descriptor) }
        ControlSocket.setTimeout(descriptor, seconds: timeoutSeconds, option: SO_RCVTIMEO)
        ControlSocket.setTimeout(descriptor, seconds: 30, option: SO_SNDTIMEO)
        var line = [UInt8](try JSONEncoder().encode(request))
        line.append(UInt8(ascii: "\n"))
        guard line.count <= ControlServer.maximumLineBytes else {
            throw Failure(description: "the command is too large for the control channel (\(line.count >> 20) MiB, at most "
                          + "\(ControlServer.maximumLineBytes >> 20) MiB)")
        }
        guard ControlSocket.writeAll(descriptor, line) else {
            throw Failure(description: "the proxy closed its control channel before the command was sent")
        }
        var buffer: [UInt8] = []
        guard let answer = ControlSocket.readLine(descriptor, buffer: &buffer, limit: 64 << 20) else {
            throw Failure(description: "the proxy did not answer on its control channel (\(path))")
        }
        guard let reply = try? JSONDecoder().decode(ControlReply.self, from: Data(answer)) else {
            throw Failure(description: "the proxy's control channel answered something that is not a reply")
        }
        return reply
    }

    private static func connect(path: String) throws -> CInt {
        // A socket in the shared fallback folder is trusted only in this user's private folder.
        if path.hasPrefix(ControlSocket.fallbackFolder + "/"), let problem = ControlSocket.fallbackFolderProblem() {
            throw Failure(description: "cannot reach the proxy's control channel \(path): \(problem)")
        }
        let descriptor = socket(AF_UNIX, CInt(SOCK_STREAM.rawValue) | CInt(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            throw Failure(description: "no socket for the control channel: \(String(cString: strerror(errno)))")
        }
        let result = ControlSocket.withAddress(path) { Glibc.connect(descriptor, $0, $1) }
        guard result == 0 else {
            let reason = errno == ENOENT || errno == ECONNREFUSED ? "no proxy is running on this data directory"
                : String(cString: strerror(errno))
            close(descriptor)
            throw Failure(description: "cannot reach the proxy's control channel \(path): \(reason)")
        }
        // Only this user's own proxy gets the requests (they may carry credentials).
        guard let uid = ControlSocket.peerUID(descriptor), uid == getuid() else {
            close(descriptor)
            throw Failure(description: "the control socket \(path) is served by another user's process: not sending to it")
        }
        return descriptor
    }
}
