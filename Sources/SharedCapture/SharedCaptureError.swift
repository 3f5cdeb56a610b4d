import Foundation

/// What can go wrong with a shared capture, in words a user can act on: the messages are
/// printed as they are by the CLI, so none carries a driver's internal error text.
public enum SharedCaptureError: Error, Equatable, CustomStringConvertible {
    /// `--store` is not a usable URL.
    case badAddress(String)
    /// The server could not be reached or refused the login; the reason in words.
    case unreachable(address: String, reason: String)
    /// The server answered with an error; its message (PostgreSQL's own words) and SQLSTATE.
    case server(message: String, sqlState: String)
    /// The database holds a newer schema than this build knows.
    case newerSchema(found: Int, known: Int)
    /// A stored row could not be read as a flow.
    case malformedRow(String)

    public var description: String {
        switch self {
        case .badAddress(let problem):
            return "--store: \(problem)"
        case .unreachable(let address, let reason):
            return "cannot reach the PostgreSQL store \(address): \(reason)"
        case .server(let message, let sqlState):
            return "the PostgreSQL store refused: \(message) (SQLSTATE \(sqlState))"
        case .newerSchema(let found, let known):
            return "the PostgreSQL store has schema version \(found), newer than this proxyapp's \(known): "
                + "update proxyapp on this machine"
        case .malformedRow(let problem):
            return "a flow in the PostgreSQL store cannot be read: \(problem)"
        }
    }
}
