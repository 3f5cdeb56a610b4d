import Foundation
import NIOConcurrencyHelpers
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Runs a client program (curl, openssl) for a test, to completion, with a clean environment
/// and a hard time limit. Shared by the test targets that drive real clients.
///
/// The environment holds only `PATH` and a private `HOME`, so neither the machine's proxy
/// variables nor its CA-bundle variables (`SSL_CERT_FILE`, `CURL_CA_BUNDLE`, …) decide what the
/// client does or trusts. A run that outlives `timeout` is killed and reported as `killed`.
public enum ChildProcess {
    public struct Outcome: Sendable {
        public var exitCode: Int32
        public var stdout: Data
        /// Standard error; also standard output when the run merged them.
        public var stderr: Data
        public var killed: Bool
    }

    /// - Parameter mergeOutput: send standard output to `stderr` too (one interleaved log).
    public static func run(_ executable: String, _ arguments: [String], timeout: TimeInterval,
                           mergeOutput: Bool = false) async throws -> Outcome {
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("proxyapp-child-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let stdoutURL = scratch.appendingPathComponent("stdout")
        let stderrURL = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
        let stdoutHandle = try FileHandle(forWritingTo: stdoutURL)
        let stderrHandle = try FileHandle(forWritingTo: stderrURL)
        defer {
            try? stdoutHandle.close()
            try? stderrHandle.close()
        }

        let stdoutFD = (mergeOutput ? stderrHandle : stdoutHandle).fileDescriptor
        let pid = try spawn(executable, arguments, environment: ["PATH=/usr/bin:/bin", "HOME=\(scratch.path)"],
                            stdout: stdoutFD, stderr: stderrHandle.fileDescriptor)
        let exited = NIOLockedValueBox(false)
        let killed = NIOLockedValueBox(false)
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout) {
            // The lock keeps the pid from being reused between the check and the kill.
            exited.withLockedValue { exited in
                if !exited {
                    killed.withLockedValue { $0 = true }
                    kill(pid, SIGKILL)
                }
            }
        }
        let status: Int32 = await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                var raw: Int32 = 0
                while waitpid(pid, &raw, 0) == -1 && errno == EINTR {}
                // Exited: its code; killed by a signal: the signal's number (as Process reports it).
                let code = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : raw & 0x7F
                exited.withLockedValue { $0 = true }
                continuation.resume(returning: code)
            }
        }
        return Outcome(exitCode: status, stdout: (try? Data(contentsOf: stdoutURL)) ?? Data(),
                       stderr: (try? Data(contentsOf: stderrURL)) ?? Data(), killed: killed.withLockedValue { $0 })
    }

    /// Starts `executable` with posix_spawn: standard input from /dev/null, output to the given
    /// descriptors, every other descriptor closed, signals at their defaults.
    ///
    /// Not Foundation's `Process`: on Linux its `run()` reads `/proc/self/fd` entries past their
    /// end and crashes now and then (swift-corelibs-foundation PR #5472, Swift 6.3.1); with
    /// hundreds of curl runs a suite hit it.
    /// Runs a program to completion on the calling thread, with no time limit, its output in
    /// the file `output`, and returns its exit status: for set-up steps that must finish (a
    /// throwaway database's `initdb` and `pg_ctl`). Blocks; never call it on an event loop.
    public static func runBlocking(_ executable: String, _ arguments: [String], output: String,
                                   environment: [String] = ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]) throws -> Int32 {
        let fd = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot write \(output)"]) }
        defer { close(fd) }
        let pid = try spawn(executable, arguments, environment: environment, stdout: fd, stderr: fd)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        // WIFEXITED / WEXITSTATUS, which Swift does not import.
        return (status & 0x7F) == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
    }

    private static func spawn(_ executable: String, _ arguments: [String], environment: [String],
                              stdout: Int32, stderr: Int32) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, stdout, 1)
        posix_spawn_file_actions_adddup2(&actions, stderr, 2)
        // Every other descriptor closed in the child (raw test sockets are not close-on-exec):
        // glibc 2.34's addclosefrom_np, which Swift's Glibc module does not show, so found by name.
        if let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") {
            typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32
            _ = unsafeBitCast(symbol, to: CloseFrom.self)(&actions, 3)
        }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGPIPE)
        var noMask = sigset_t()
        sigemptyset(&noMask)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setsigmask(&attributes, &noMask)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup($0) } + [nil]
        defer {
            for pointer in argv { free(pointer) }
            for pointer in envp { free(pointer) }
        }
        var pid: pid_t = 0
        let result = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSLocalizedDescriptionKey: "cannot start \(executable): errno \(result)"])
        }
        return pid
    }
}
