import Crypto
import Foundation

/// The user names and passwords `--auth USER:PASS` accepts, and the check of a request's
/// `Proxy-Authorization: Basic …` (or a SOCKS5 username/password) against them.
///
/// Only SHA-256 digests of `user:password` are kept, and a presented pair is compared with
/// every entry in constant time, so neither timing nor a memory dump gives a password away.
/// The user name is kept in clear for logs and flows.
public struct ProxyCredentials: Sendable {
    private struct Entry: Sendable {
        var user: String
        var digest: [UInt8]
    }

    private var entries: [Entry] = []
    /// `--auth-file` users: bcrypt hashes, checked off the event loops (`HashedLogin`).
    private var hashed: [String: String] = [:]

    public init() {}

    public var isEmpty: Bool { entries.isEmpty && hashed.isEmpty }
    public var count: Int { entries.count + hashed.count }

    /// Adds an `--auth-file` user (a bcrypt hash `PasswordFile` accepted). A user also given
    /// by `--auth` keeps both: either password logs in.
    public mutating func add(user: String, bcryptHash: String) {
        hashed[user] = bcryptHash
    }

    /// A login: accepted or refused from the `--auth` entries, or, for an `--auth-file` user,
    /// a hash that must be checked (slowly, off the event loop) first.
    public func login(name: [UInt8], password: [UInt8]) -> LoginCheck {
        if let user = user(name: name, password: password) { return .accepted(user: user) }
        let user = String(decoding: name, as: UTF8.self)
        if let hash = hashed[user], Array(user.utf8) == name {
            return .needsHashCheck(HashedLogin(user: user, password: password, hash: hash,
                                               key: Self.digest(user: name, password: password)))
        }
        return .rejected
    }

    /// Parses `USER:PASS` as `--auth` takes it: the first `:` splits; the user name may not be
    /// empty nor hold control characters; the password may hold `:`.
    public static func parseEntry(_ text: String) -> Result<(user: String, password: String), CredentialError> {
        guard let colon = text.firstIndex(of: ":") else {
            return .failure(.init(reason: "'\(text.prefix(40))' has no ':' between user name and password (write USER:PASS)"))
        }
        let user = String(text[..<colon])
        let password = String(text[text.index(after: colon)...])
        guard !user.isEmpty else { return .failure(.init(reason: "the user name before ':' is empty (write USER:PASS)")) }
        guard !password.isEmpty else { return .failure(.init(reason: "the password after '\(user):' is empty (write USER:PASS)")) }
        guard !(user + password).unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            return .failure(.init(reason: "the user name or password holds a control character"))
        }
        // RFC 1929 carries each in one length byte.
        guard user.utf8.count <= 255, password.utf8.count <= 255 else {
            return .failure(.init(reason: "user names and passwords are limited to 255 bytes each"))
        }
        return .success((user, password))
    }

    public mutating func add(user: String, password: String) {
        entries.append(Entry(user: user, digest: Self.digest(user: Array(user.utf8), password: Array(password.utf8))))
    }

    /// The user whose name and password these are, or nil.
    public func user(name: [UInt8], password: [UInt8]) -> String? {
        let presented = Self.digest(user: name, password: password)
        var found: String?
        for entry in entries where Self.constantTimeEqual(entry.digest, presented) && found == nil {
            found = entry.user
        }
        return found
    }

    /// Checks the `Proxy-Authorization` field values of one request.
    public func check(proxyAuthorization values: [String]) -> ProxyAuthenticationOutcome {
        guard !values.isEmpty else { return .missing }
        guard values.count == 1 else { return .rejected(reason: "the request has more than one Proxy-Authorization field") }
        let value = Substring(values[0]).trimmingWhitespace()
        guard let space = value.firstIndex(where: { $0 == " " || $0 == "\t" }),
              value[..<space].lowercased() == "basic" else {
            return .rejected(reason: "only Basic proxy authentication is accepted")
        }
        let encoded = Substring(value[space...]).trimmingWhitespace()
        guard encoded.utf8.count <= 1400, let decoded = Data(base64Encoded: String(encoded)) else {
            return .rejected(reason: "the Basic credentials are not valid base64")
        }
        let bytes = Array(decoded)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else {
            return .rejected(reason: "the Basic credentials have no ':' between user name and password")
        }
        switch login(name: Array(bytes[..<colon]), password: Array(bytes[(colon + 1)...])) {
        case .accepted(let user): return .accepted(user: user)
        case .needsHashCheck(let login): return .needsHashCheck(login)
        case .rejected: return .rejected(reason: Self.wrongLogin)
        }
    }

    /// What a wrong user name or password is told.
    public static let wrongLogin = "wrong user name or password"


    private static func digest(user: [UInt8], password: [UInt8]) -> [UInt8] {
        var hash = SHA256()
        hash.update(data: user)
        hash.update(data: [0])  // user "a:b" + password "c" differs from user "a" + password "b:c"
        hash.update(data: password)
        return Array(hash.finalize())
    }

    private static func constantTimeEqual(_ left: [UInt8], _ right: [UInt8]) -> Bool {
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}

/// What a request's proxy credentials came to.
public enum ProxyAuthenticationOutcome: Hashable, Sendable {
    case accepted(user: String)
    /// No `Proxy-Authorization` at all: the client is asked for one (407).
    case missing
    /// Present but not accepted, and why (said in the 407's body, never the password).
    case rejected(reason: String)
    /// An `--auth-file` user: the password is checked against its hash before anything else.
    case needsHashCheck(HashedLogin)
}

/// What one login came to before any hash was checked.
public enum LoginCheck: Hashable, Sendable {
    case accepted(user: String)
    case rejected
    case needsHashCheck(HashedLogin)
}

/// A login to check against an `--auth-file` bcrypt hash. `key` (SHA-256 of the user name and
/// password) is what verdicts are remembered by, so the password itself is never kept.
public struct HashedLogin: Hashable, Sendable {
    public let user: String
    public let password: [UInt8]
    public let hash: String
    public let key: [UInt8]
}

/// A `--auth` value that cannot be used, in words.
public struct CredentialError: Error, Hashable, Sendable, CustomStringConvertible {
    public let reason: String
    public var description: String { reason }
}
