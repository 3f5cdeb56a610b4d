import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Runs the person's editor on a text and returns what they saved: `$VISUAL`, else `$EDITOR`,
/// else `vi`, as `git` and `crontab -e` choose it (the variable may hold arguments:
/// `code --wait`). The text goes in a private file (0600) of the temporary folder, removed after.
///
/// The child is started with `posix_spawn` (Foundation's `Process` over-reads descriptors on
/// Linux), inherits the terminal, and is waited for: the caller has lent it the terminal.
enum ExternalEditor {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func command(environment: [String: String]) -> String {
        for name in ["VISUAL", "EDITOR"] {
            if let value = environment[name], !value.trimmingCharacters(in: .whitespaces).isEmpty { return value }
        }
        return "vi"
    }

    /// The saved text; a failure in words when the editor could not run, exited with an error,
    /// or left no readable file.
    static func edit(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> Result<String, Failure> {
        var template = Array((NSTemporaryDirectory() as NSString).appendingPathComponent("proxyapp-edit-XXXXXX.http").utf8CString)
        let descriptor = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, 5) }
        guard descriptor >= 0 else { return .failure(Failure(description: "cannot make a file to edit: \(String(cString: strerror(errno)))")) }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(path) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        guard written == bytes.count else { return .failure(Failure(description: "cannot write the file to edit (\(path))")) }

        let editor = command(environment: environment)
        // The command is the user's own setting, run by their shell; the file name is an argument.
        let arguments = ["/bin/sh", "-c", "\(editor) \"$1\"", "proxyapp-editor", path]
        var pid: pid_t = 0
        let argv = arguments.map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let environ = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { environ.forEach { free($0) } }
        let spawned = posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ)
        guard spawned == 0 else {
            return .failure(Failure(description: "cannot start the editor '\(editor)': \(String(cString: strerror(spawned)))"))
        }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = status & 0x7F == 0
        let code = (status >> 8) & 0xFF
        guard exited, code == 0 else {
            return .failure(Failure(description: "the editor '\(editor)' \(exited ? "exited with status \(code)" : "was killed"): "
                                    + "nothing was sent (set $VISUAL or $EDITOR to another editor)"))
        }
        guard let saved = try? String(contentsOfFile: path, encoding: .utf8) else {
            return .failure(Failure(description: "the edited file is gone or not UTF-8 text: nothing was sent"))
        }
        return .success(saved)
    }
}
