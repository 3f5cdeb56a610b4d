import NIOCore
import NIOSSL
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Socket errors in words a user can act on, for flow errors, log lines and CLI messages alike.
///
/// NIO describes an `IOError` by its system call's Swift signature, with an unbalanced
/// parenthesis ("read(descriptor:pointer:size:): Connection reset by peer) (errno: 104)"), and a
/// `SocketAddressError` by its enum case: neither is a reason. This is the one place errno
/// becomes words; who is at the other end (`Peer`) makes "the client reset the connection".
public enum SystemErrorText {
    /// The far end of the socket, when the caller knows it.
    public enum Peer: String, Sendable {
        case client
        case server
    }

    /// `error` in words: NIO's socket and address errors mapped, anything else as it describes itself.
    public static func describe(_ error: any Error, peer: Peer? = nil) -> String {
        switch error {
        case let error as IOError:
            return words(errno: error.errnoCode, peer: peer)
        case let error as SocketAddressError.UnknownHost:
            return "no address found for the host name '\(error.host)'"
        case SocketAddressError.failedToParseIPString(let text):
            return "'\(text)' is not an IP address"
        case SocketAddressError.unsupported:
            return "the address family is not supported"
        case SocketAddressError.unixDomainSocketPathTooLong:
            return "the socket path is too long"
        case NIOSSLError.uncleanShutdown:
            return "\(peer.map { "the \($0.rawValue)" } ?? "the other side") closed the TLS connection without a close_notify"
        default:
            return "\(error)"
        }
    }

    /// One errno in words; unusual ones as the C library says them, with the number.
    public static func words(errno code: Int32, peer: Peer? = nil) -> String {
        let who = peer.map { "the \($0.rawValue)" }
        switch code {
        case ECONNRESET: return "\(who ?? "the other side") reset the connection"
        case EPIPE: return "\(who ?? "the other side") closed the connection while data was being sent"
        case ECONNREFUSED: return "\(who ?? "the other side") refused the connection"
        case ETIMEDOUT: return "the connection\(who.map { " to \($0)" } ?? "") timed out"
        case EHOSTUNREACH, ENETUNREACH: return "no route to \(who ?? "the host")"
        case EADDRINUSE: return "the address is already in use"
        case EADDRNOTAVAIL: return "the address does not belong to this machine"
        case EACCES, EPERM: return "permission denied"
        case EMFILE, ENFILE: return "too many open files"
        default:
            let text = String(cString: strerror(code))
            return "\(text.prefix(1).lowercased())\(text.dropFirst()) (errno \(code))"
        }
    }
}
