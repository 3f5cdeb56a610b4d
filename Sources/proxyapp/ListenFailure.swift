import Foundation
import NIOCore
import ProxyEngine

/// The message for a listening socket the proxy could not open, in words with the fix: NIO's
/// `IOError` describes itself with its system call's Swift signature ("bind(descriptor:ptr:bytes:):
/// Address already in use) (errno: 98)"), which is no reason a user can act on.
enum ListenFailure {
    static func message(listen: String, error: any Error) -> String {
        switch error {
        case let error as IOError where error.errnoCode == EADDRINUSE:
            return "\(listen) is already in use: stop the other process or choose another --listen."
        case let error as IOError where error.errnoCode == EACCES:
            return "cannot listen on \(listen): permission denied (ports below 1024 need root): choose another --listen, e.g. 127.0.0.1:8080."
        case let error as IOError where error.errnoCode == EADDRNOTAVAIL:
            return "cannot listen on \(listen): the address does not belong to this machine: choose another --listen, e.g. 127.0.0.1:8080."
        default:
            return "cannot listen on \(listen): \(SystemErrorText.describe(error)). Choose another --listen, e.g. 127.0.0.1:8080."
        }
    }
}
