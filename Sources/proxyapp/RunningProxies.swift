import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Which `proxyapp run` processes use a data directory, so commands that would change what a
/// running proxy depends on (`ca regenerate`, `ca import`: it keeps signing with the CA it
/// loaded) can refuse and name them.
///
/// Each proxy holds an exclusive `flock` on `<data-dir>/run/proxy-PID.lock` for its whole life,
/// with its pid and listen address inside. The kernel drops the lock when the process ends, even
/// by `kill -9`, so a file whose lock can be taken is a leftover and means nothing: the lock, not
/// the file, says a proxy runs. Several proxies may share a directory (each has its own file).
enum RunningProxies {
    /// A proxy found holding its marker.
    struct Entry: Equatable {
        var pid: Int32
        var listen: String

        var description: String { "pid \(pid), listening on \(listen)" }
    }

    /// The marker a running proxy holds; released (and removed) on `release()` or process exit.
    final class Marker: Sendable {
        private let descriptor: Int32
        private let path: String

        fileprivate init(descriptor: Int32, path: String) {
            self.descriptor = descriptor
            self.path = path
        }

        /// Records the address the proxy listens on, once it is bound.
        func update(listen: String) {
            RunningProxies.write(pid: getpid(), listen: listen, to: descriptor)
        }

        func release() {
            unlink(path)
            close(descriptor)
        }
    }

    static func directory(in dataDirectory: URL) -> URL {
        dataDirectory.appendingPathComponent("run", isDirectory: true)
    }

    /// Takes this process's marker in `dataDirectory`. Take it before loading the CA: a
    /// `ca regenerate` that checks after this point refuses, and one that checked before holds the
    /// CA store's lock until its new CA is written, which the load then waits for.
    static func mark(dataDirectory: URL) throws -> Marker {
        let folder = directory(in: dataDirectory)
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw CLIError("cannot create \(folder.path): \(error.localizedDescription). Pass a writable --data-dir.")
        }
        let path = folder.appendingPathComponent("proxy-\(getpid()).lock").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard descriptor >= 0 else {
            throw CLIError("cannot create \(path): \(String(cString: strerror(errno))). Pass a writable --data-dir.")
        }
        // Our own pid's file: nobody else holds it (a leftover from an earlier process with this
        // pid is not locked), so this never waits.
        guard lock(descriptor, LOCK_EX | LOCK_NB) else {
            close(descriptor)
            throw CLIError("cannot lock \(path): \(String(cString: strerror(errno))).")
        }
        write(pid: getpid(), listen: "(starting)", to: descriptor)
        return Marker(descriptor: descriptor, path: path)
    }

    /// The proxies holding their markers in `dataDirectory` now, by pid.
    static func running(in dataDirectory: URL) -> [Entry] {
        let folder = directory(in: dataDirectory)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder.path) else { return [] }
        var entries: [Entry] = []
        for name in names where name.hasPrefix("proxy-") && name.hasSuffix(".lock") {
            let path = folder.appendingPathComponent(name).path
            let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
            guard descriptor >= 0 else { continue }
            defer { close(descriptor) }
            if lock(descriptor, LOCK_SH | LOCK_NB) {
                continue  // nobody holds it: left over by a process that ended (kill -9)
            }
            guard errno == EWOULDBLOCK else { continue }
            entries.append(parse(read(descriptor), fallbackPID: Int32(name.dropFirst(6).dropLast(5)) ?? 0))
        }
        return entries.sorted { $0.pid < $1.pid }
    }

    /// Throws, naming the running proxies, when any uses `dataDirectory`.
    static func refuseIfRunning(in dataDirectory: URL, command: String) throws {
        let proxies = running(in: dataDirectory)
        guard !proxies.isEmpty else { return }
        let which = proxies.map(\.description).joined(separator: "; ")
        let pids = proxies.map { String($0.pid) }.joined(separator: " ")
        throw CLIError(
            "a proxy is running with the data directory \(dataDirectory.path) (\(which)): it would keep signing "
                + "with the CA it loaded. Stop it first (Ctrl-C, or kill \(pids)), then run `\(command)` again.")
    }

    /// `pid=N` and `listen=ADDRESS` lines; what is missing falls back to the file name's pid.
    static func parse(_ text: String, fallbackPID: Int32) -> Entry {
        var entry = Entry(pid: fallbackPID, listen: "an unknown address")
        for line in text.split(separator: "\n") {
            if line.hasPrefix("pid="), let pid = Int32(line.dropFirst(4)) { entry.pid = pid }
            if line.hasPrefix("listen="), !line.dropFirst(7).isEmpty { entry.listen = String(line.dropFirst(7)) }
        }
        return entry
    }

    private static func lock(_ descriptor: Int32, _ operation: Int32) -> Bool {
        while flock(descriptor, operation) != 0 {
            guard errno == EINTR else { return false }
        }
        return true
    }

    private static func write(pid: Int32, listen: String, to descriptor: Int32) {
        let bytes = Array("pid=\(pid)\nlisten=\(listen)\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
    }

    /// The first 4 KiB of the file (a marker is a few dozen bytes).
    private static func read(_ descriptor: Int32) -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { pread(descriptor, $0.baseAddress, $0.count, 0) }
        return String(decoding: buffer.prefix(max(0, count)), as: UTF8.self)
    }
}
