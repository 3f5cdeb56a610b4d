import Foundation
import NIOCore

/// The message for a listening socket the proxy could not open, in words: NIO's `IOError`
/// describes itself with its system call's Swift signature ("bind(descriptor:ptr:bytes:):
/// Address already in use) (errno: 98)"), which is no reason a user can act on.
enum ListenFailure {
    static func message(listen: String, error: any Error) -> String {
        let reason: String
        if let error = error as? IOError {
            let words = String(cString: strerror(error.errnoCode))
            reason = "\(words.prefix(1).lowercased())\(words.dropFirst()) (errno \(error.errnoCode))"
        } else {
            reason = "\(error)"
        }
        return "cannot listen on \(listen): \(reason). Pick another address with --listen HOST:PORT."
    }
}
