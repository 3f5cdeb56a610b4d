import Foundation

/// Where a shared capture lives: `--store postgres://user:password@host:port/database`, parsed
/// and checked before anything connects.
///
/// Only the URL form libpq users know is taken: `postgres://` or `postgresql://`, a host name,
/// an IPv4 address or a bracketed IPv6 one, an optional port (5432), a database (the user's
/// name when absent), percent-escapes in the user, password and database, and `sslmode`
/// (`disable`, `prefer` the default, `require`, `verify-full`) as the one query parameter.
/// Anything else is refused with a message naming the problem, never guessed.
public struct PostgresStoreAddress: Sendable, Equatable {
    /// How the connection uses TLS, with libpq's meanings: `prefer` and `require` do not check
    /// the server's certificate, `verify-full` does (system trust store, host name).
    public enum TLSMode: String, Sendable, CaseIterable {
        case disable, prefer, require
        case verifyFull = "verify-full"
    }

    public var host: String
    public var port: Int
    public var user: String
    public var password: String?
    public var database: String
    public var tls: TLSMode

    public init(host: String, port: Int = 5432, user: String, password: String? = nil, database: String,
                tls: TLSMode = .prefer) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.tls = tls
    }

    /// Whether `text` is meant as a PostgreSQL URL (so that anything else can be named as such).
    public static func looksLikePostgres(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("postgres://") || lower.hasPrefix("postgresql://")
    }

    /// Parses `text`; throws `SharedCaptureError.badAddress` with what is wrong and an example.
    public init(parsing text: String) throws {
        func bad(_ problem: String) -> SharedCaptureError {
            .badAddress(problem + " (expected postgres://USER:PASSWORD@HOST:PORT/DATABASE)")
        }
        guard Self.looksLikePostgres(text) else {
            throw bad("'\(Self.redacting(text))' is not a postgres:// URL")
        }
        guard text.utf8.count <= 4096 else { throw bad("the URL is longer than 4,096 bytes") }
        guard !text.unicodeScalars.contains(where: { $0.value < 0x21 || $0.value == 0x7F }) else {
            throw bad("the URL contains a space or a control character")
        }
        guard let components = URLComponents(string: text) else { throw bad("the URL cannot be parsed") }
        guard let host = components.host, !host.isEmpty else { throw bad("the URL names no host") }
        guard let user = components.user, !user.isEmpty else { throw bad("the URL names no user") }
        let port = components.port ?? 5432
        guard (1...65535).contains(port) else { throw bad("the port \(port) is not between 1 and 65535") }
        var database = components.path
        if database.hasPrefix("/") { database.removeFirst() }
        guard !database.contains("/") else { throw bad("the database name '\(database)' contains a slash") }
        var tls = TLSMode.prefer
        for item in components.queryItems ?? [] {
            guard item.name == "sslmode" else {
                throw bad("the URL parameter '\(item.name)' is not supported (only sslmode is)")
            }
            guard let mode = item.value.flatMap(TLSMode.init(rawValue:)) else {
                let names = TLSMode.allCases.map(\.rawValue).joined(separator: ", ")
                throw bad("sslmode '\(item.value ?? "")' is not one of \(names)")
            }
            tls = mode
        }
        guard let decodedUser = user.removingPercentEncoding,
              let decodedDatabase = database.removingPercentEncoding,
              components.password.map({ $0.removingPercentEncoding != nil }) ?? true else {
            throw bad("the URL has a broken percent-escape")
        }
        var bareHost = host
        if bareHost.hasPrefix("[") && bareHost.hasSuffix("]") { bareHost = String(bareHost.dropFirst().dropLast()) }
        self.init(host: bareHost, port: port, user: decodedUser,
                  password: components.password.flatMap { $0.removingPercentEncoding },
                  database: decodedDatabase.isEmpty ? decodedUser : decodedDatabase, tls: tls)
    }

    /// The address for banners and logs: never the password.
    public var redacted: String {
        let hostPart = host.contains(":") ? "[\(host)]" : host
        let secret = password == nil ? "" : ":***"
        let mode = tls == .prefer ? "" : "?sslmode=\(tls.rawValue)"
        return "postgres://\(user)\(secret)@\(hostPart):\(port)/\(database)\(mode)"
    }

    /// `text` with any password between `://user:` and `@` replaced, for messages about a URL
    /// that did not parse.
    static func redacting(_ text: String) -> String {
        guard let scheme = text.range(of: "://"), let at = text[scheme.upperBound...].lastIndex(of: "@") else {
            return text
        }
        let credentials = text[scheme.upperBound..<at]
        guard let colon = credentials.firstIndex(of: ":") else { return text }
        return String(text[..<colon]) + ":***" + String(text[at...])
    }
}
