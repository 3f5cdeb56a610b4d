import ChildProcess
import Foundation
import SharedCapture

/// A throwaway PostgreSQL server for tests: a cluster made with `initdb` in a temporary
/// directory, listening on a free loopback port, stopped and deleted by `stop()`.
///
/// PostgreSQL refuses to run as root, so under root (CI, the clean-clone run) every
/// command runs as the `postgres` user that Debian's package creates (`runuser`), and the
/// directory is handed to that user. Authentication is `trust` on loopback; the tests that
/// need a password set one (`setPassword`). fsync is off: the tests never crash the machine.
/// The binaries are Debian's (`/usr/lib/postgresql/N/bin`, the newest N), which
/// `scripts/test` installs (package `postgresql`).
public final class PostgresTestCluster: @unchecked Sendable {
    public let port: Int
    public let directory: String
    private let binaries: String
    private let asPostgres: Bool
    /// The superuser `initdb` creates (no password).
    public static let user = "proxyapp"

    /// Starts a new cluster; throws with the tool's own output when one of the steps fails.
    public static func start() throws -> PostgresTestCluster {
        let binaries = try findBinaries()
        let asPostgres = geteuid() == 0
        let directory = NSTemporaryDirectory() + "proxyapp-pg-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        if asPostgres {
            guard let user = getpwnam("postgres") else {
                throw ClusterError("no 'postgres' user: install the postgresql package (scripts/test does)")
            }
            chown(directory, user.pointee.pw_uid, user.pointee.pw_gid)
        }
        chmod(directory, 0o700)
        let cluster = PostgresTestCluster(port: try freePort(), directory: directory, binaries: binaries,
                                          asPostgres: asPostgres)
        try cluster.run("initdb", ["-D", directory + "/data", "-U", user, "--auth=trust", "-E", "UTF8",
                                   "--no-locale", "--no-sync"])
        try cluster.startServer()
        return cluster
    }

    private init(port: Int, directory: String, binaries: String, asPostgres: Bool) {
        self.port = port
        self.directory = directory
        self.binaries = binaries
        self.asPostgres = asPostgres
    }

    /// The URL of database `database` on this cluster, as a user passes it to `--store`.
    public func url(database: String = "postgres", user: String = PostgresTestCluster.user,
                    password: String? = nil) -> String {
        let secret = password.map { ":" + $0 } ?? ""
        return "postgres://\(user)\(secret)@127.0.0.1:\(port)/\(database)?sslmode=disable"
    }

    public func address(database: String = "postgres") -> PostgresStoreAddress {
        PostgresStoreAddress(host: "127.0.0.1", port: port, user: Self.user, database: database, tls: .disable)
    }

    /// Creates an empty database with a fresh name and returns the name: one per test.
    public func createDatabase() throws -> String {
        let name = "t_" + UUID().uuidString.prefix(12).lowercased().replacingOccurrences(of: "-", with: "")
        let session = PostgresSession(address: address())
        defer { session.disconnect() }
        try session.query("CREATE DATABASE \(name)")
        return name
    }

    /// Stops the server (a fast shutdown: sessions are ended), keeping its files for `startServer`.
    public func stopServer() throws {
        try run("pg_ctl", ["-D", directory + "/data", "-m", "fast", "-w", "stop"])
    }

    /// Starts the server on `port`, waiting until it accepts connections.
    public func startServer() throws {
        try run("pg_ctl", ["-D", directory + "/data", "-l", directory + "/server.log", "-w", "-t", "30", "-o",
                           "-p \(port) -c listen_addresses=127.0.0.1 -c unix_socket_directories='\(directory)' "
                               + "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c shared_buffers=16MB",
                           "start"])
    }

    /// Freezes every process of the server (SIGSTOP): connections stay open and nothing
    /// answers, as when a network goes quiet. `resume()` undoes it.
    public func pause() throws {
        try signalServer(SIGSTOP)
    }

    public func resume() throws {
        try signalServer(SIGCONT)
    }

    /// Sends `signal` to the postmaster (its pid is the first line of `postmaster.pid`) and to
    /// every process it started.
    private func signalServer(_ signal: Int32) throws {
        guard let text = try? String(contentsOfFile: directory + "/data/postmaster.pid", encoding: .utf8),
              let line = text.split(separator: "\n").first, let postmaster = Int32(line) else {
            throw ClusterError("no postmaster.pid: the server is not running")
        }
        var pids = [postmaster]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry),
                  let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                  let nameEnd = stat.lastIndex(of: ")") else { continue }
            // Fields after the name: state, then the parent's pid.
            let fields = stat[stat.index(after: nameEnd)...].split(separator: " ")
            if fields.count > 1, Int32(fields[1]) == postmaster { pids.append(pid) }
        }
        for pid in pids { kill(pid, signal) }
    }

    /// Stops the server and deletes the cluster.
    public func stop() {
        try? stopServer()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Runs a PostgreSQL tool, as `postgres` under root; throws with its output on failure.
    private func run(_ tool: String, _ arguments: [String]) throws {
        let executable = asPostgres ? "/usr/sbin/runuser" : binaries + "/" + tool
        let all = asPostgres ? ["-u", "postgres", "--", binaries + "/" + tool] + arguments : arguments
        // A file, not a pipe: the server `pg_ctl start` leaves running would hold a pipe open.
        let outputPath = directory + "/tool-output"
        let status = try ChildProcess.runBlocking(executable, all, output: outputPath)
        guard status == 0 else {
            let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
            let log = (try? String(contentsOfFile: directory + "/server.log", encoding: .utf8)) ?? ""
            throw ClusterError("\(tool) failed (\(status)): \(text)\nserver log:\n\(log)")
        }
    }

    /// Debian's newest `/usr/lib/postgresql/N/bin`.
    private static func findBinaries() throws -> String {
        let root = "/usr/lib/postgresql"
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: root)) ?? []
        let newest = versions.compactMap(Int.init).sorted().last
        guard let newest, FileManager.default.isExecutableFile(atPath: "\(root)/\(newest)/bin/initdb") else {
            throw ClusterError("no PostgreSQL under \(root): install the postgresql package (scripts/test does)")
        }
        return "\(root)/\(newest)/bin"
    }

    /// A loopback port nothing listens on now (bound and released).
    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ClusterError("no socket for finding a free port") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0
                && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw ClusterError("cannot bind a loopback port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    public struct ClusterError: Error, CustomStringConvertible {
        public let description: String
        init(_ description: String) { self.description = description }
    }
}
