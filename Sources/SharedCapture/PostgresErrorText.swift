import Foundation
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// Turns what postgres-nio and NIO throw into `SharedCaptureError`s in words: a server's own
/// message and SQLSTATE, or why the store could not be reached ("connection refused", "no
/// answer within 5 seconds"), never a driver's internal description.
enum PostgresErrorText {
    static func translate(_ error: any Error, address: PostgresStoreAddress) -> SharedCaptureError {
        if let shared = error as? SharedCaptureError { return shared }
        let unreachable = { (reason: String) in SharedCaptureError.unreachable(address: address.redacted, reason: reason) }
        guard let psql = error as? PSQLError else {
            return unreachable(reason(error) ?? "the connection failed")
        }
        switch psql.code {
        case .server:
            let message = psql.serverInfo?[.message] ?? "an error without a message"
            let state = psql.serverInfo?[.sqlState] ?? "?????"
            // Connection exceptions, shutdowns and "cannot connect now": the server is going or
            // not there yet, which is an outage rather than a refusal.
            if state.hasPrefix("08") || state.hasPrefix("57P") {
                return unreachable("the server is shutting down or not accepting connections (\(message))")
            }
            return .server(message: message, sqlState: state)
        case .sslUnsupported:
            return unreachable("the server does not offer TLS; use sslmode=disable or prefer")
        case .failedToAddSSLHandler, .receivedUnencryptedDataAfterSSLRequest:
            return unreachable("TLS with the server failed")
        case .authMechanismRequiresPassword:
            return unreachable("the server asks for a password and the URL has none")
        case .unsupportedAuthMechanism, .saslError:
            return unreachable("the server's login method is not supported (use scram-sha-256, md5 or trust)")
        case .serverClosedConnection, .uncleanShutdown, .clientClosedConnection:
            return unreachable("the server closed the connection")
        case .connectionError:
            return unreachable(psql.underlying.flatMap(reason) ?? "the connection failed")
        case .tooManyParameters:
            return .server(message: "too many values in one statement", sqlState: "54000")
        default:
            return unreachable(psql.underlying.flatMap(reason) ?? "the connection failed")
        }
    }

    /// Why a connection failed, in words, for the errors NIO throws; nil for others.
    static func reason(_ error: any Error) -> String? {
        switch error {
        case let io as IOError:
            return String(cString: strerror(io.errnoCode)).lowercased()
        case ChannelError.connectTimeout(let amount):
            let seconds = Double(amount.nanoseconds) / 1e9
            return "no answer within \(seconds.formatted(.number.precision(.fractionLength(0...1)))) seconds"
        case let connection as NIOConnectionError:
            if let first = connection.connectionErrors.first { return reason(first.error) ?? "the connection failed" }
            if connection.dnsAError != nil || connection.dnsAAAAError != nil {
                return "the host name \(connection.host) does not resolve"
            }
            return "no address to connect to"
        case is NIOSSLError:
            return "TLS with the server failed"
        case is ChannelError:
            return "the connection failed"
        default:
            return nil
        }
    }
}
