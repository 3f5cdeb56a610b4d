import ChildProcess
import Foundation
import TestSupport
import XCTest

/// `scripts/run` as a user starts it from their own directory, on a copy of the script in a
/// scratch tree with stand-ins for `swift` and `dpkg-query` (so no real build runs): the proxy
/// runs in the caller's directory, a warm start with unchanged sources asks neither dpkg nor
/// swift, and a changed, added or failed input makes the next start build. The first start on
/// a fresh clone (no `.build/release` yet, which SwiftPM then makes a link) works too.
final class ScriptsRunTests: XCTestCase {
    /// The stand-in `swift build` logs its call and writes a `proxyapp` that prints its working
    /// directory and arguments; it fails when the file `fail-build` exists. `dpkg-query` logs and
    /// reports every package installed.
    private struct Tree {
        var repository: URL
        var caller: URL
        var bin: URL
        var log: URL

        var calls: [String] {
            ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        }
    }

    private func makeTree() throws -> Tree {
        let scratch = try makeTemporaryDirectory("scripts-run")
        try scratch.makeFolder("scripts run")  // a space in every path on purpose (the label keeps no spaces)
        let root = scratch.url.appendingPathComponent("scripts run", isDirectory: true)
        let repository = root.appendingPathComponent("repo dir", isDirectory: true)
        let caller = root.appendingPathComponent("my work", isDirectory: true)
        let bin = root.appendingPathComponent("bin", isDirectory: true)
        let log = root.appendingPathComponent("calls.log")
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let fileManager = FileManager.default
        for directory in [repository.appendingPathComponent("scripts/lib"), repository.appendingPathComponent("Sources/proxyapp"), caller, bin] {
            try fileManager.createDirectory(at: directory, withIntermediateDirectories: true)
        }
        for path in ["scripts/run", "scripts/lib/deps.sh", "scripts/lib/proxyapp.link-order"] {
            try fileManager.copyItem(at: source.appendingPathComponent(path), to: repository.appendingPathComponent(path))
        }
        try "// main\n".write(to: repository.appendingPathComponent("Sources/proxyapp/main.swift"), atomically: true, encoding: .utf8)
        try "// package\n".write(to: repository.appendingPathComponent("Package.swift"), atomically: true, encoding: .utf8)
        try executable(bin.appendingPathComponent("swift"), """
            #!/bin/sh
            product=kept; [ -e .build/release/proxyapp ] || product=gone
            echo "swift $* product=$product" >> '\(log.path)'
            [ -e '\(root.path)/fail-build' ] && exit 1
            # As SwiftPM does: .build/release becomes a link to the triple's directory, replacing
            # whatever was there (a stamp kept inside a directory made beforehand is lost).
            mkdir -p .build/triple/release
            [ -L .build/release ] || { rm -rf .build/release; ln -s triple/release .build/release; }
            printf '#!/bin/sh\\necho "cwd=$PWD args=$*"\\n' > .build/release/proxyapp
            chmod +x .build/release/proxyapp
            """)
        try executable(bin.appendingPathComponent("dpkg-query"), """
            #!/bin/sh
            echo "dpkg-query" >> '\(log.path)'
            for p in "$@"; do case $p in -*) ;; *) echo "$p install ok installed" ;; esac; done
            """)
        return Tree(repository: repository, caller: caller, bin: bin, log: log)
    }

    private func executable(_ url: URL, _ text: String) throws {
        try text.write(to: url, atomically: true, encoding: .utf8)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
    }

    /// Runs `scripts/run ARGS` from the caller's directory; returns exit code and output.
    private func runScript(_ tree: Tree, _ arguments: String) async throws -> (Int32, String) {
        let command = "cd '\(tree.caller.path)' && PATH='\(tree.bin.path)':/usr/bin:/bin exec '\(tree.repository.path)/scripts/run' \(arguments)"
        let outcome = try await ChildProcess.run("/bin/bash", ["-c", command], timeout: 30, mergeOutput: true)
        XCTAssertFalse(outcome.killed, "scripts/run did not finish within 30 s")
        return (outcome.exitCode, String(decoding: outcome.stderr, as: UTF8.self))
    }

    /// Sets a file's modification time `seconds` into the past.
    private func age(_ url: URL, by seconds: TimeInterval) throws {
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -seconds)], ofItemAtPath: url.path)
    }

    /// Ages every input and the stamp so that the stamp is the newest (no same-tick ties).
    private func settle(_ tree: Tree) throws {
        for path in ["Sources/proxyapp/main.swift", "Sources/proxyapp", "Sources", "Package.swift", "scripts/lib/deps.sh",
                     "scripts/lib/proxyapp.link-order"] {
            try age(tree.repository.appendingPathComponent(path), by: 7200)
        }
        try age(tree.repository.appendingPathComponent(".build/stamps/proxyapp.stamp"), by: 3600)
    }

    func testRunsInTheCallersDirectoryAndSkipsTheBuildWhenNothingChanged() async throws {
        let tree = try makeTree()
        let (first, firstOutput) = try await runScript(tree, "--version 'two words'")
        XCTAssertEqual(first, 0, firstOutput)
        XCTAssertTrue(firstOutput.hasSuffix("\ncwd=\(tree.caller.path) args=run --version two words\n"), firstOutput)
        XCTAssertEqual(tree.calls.filter { $0.hasPrefix("swift build") }.count, 1, "\(tree.calls)")
        XCTAssertTrue(tree.calls.contains("dpkg-query"), "a cold start checks the packages: \(tree.calls)")
        let order = tree.repository.appendingPathComponent("scripts/lib/proxyapp.link-order").path
        XCTAssertTrue(tree.calls.contains { $0.hasPrefix("swift build") && $0.contains(" --section-ordering-file=\(order) ") },
                      "the link order is named by its absolute path, wherever the caller is: \(tree.calls)")

        try settle(tree)
        let before = tree.calls
        let (warm, warmOutput) = try await runScript(tree, "--help")
        XCTAssertEqual(warm, 0, warmOutput)
        XCTAssertEqual(warmOutput, "cwd=\(tree.caller.path) args=run --help\n")
        XCTAssertEqual(tree.calls, before, "a warm start with unchanged sources asks neither dpkg nor swift")
    }

    /// An added source file, an edited Package.swift, a new Package.resolved, a new link order:
    /// each makes the next start build once.
    func testAChangedInputBuildsAgain() async throws {
        let tree = try makeTree()
        _ = try await runScript(tree, "--version")
        for change in ["Sources/proxyapp/New.swift", "Package.swift", "Package.resolved", "scripts/lib/proxyapp.link-order"] {
            try settle(tree)
            if change == "Package.resolved" { try? age(tree.repository.appendingPathComponent(change), by: 7200) }
            let builds = tree.calls.filter { $0.hasPrefix("swift build") }.count
            try "// changed\n".write(to: tree.repository.appendingPathComponent(change), atomically: false, encoding: .utf8)
            let (status, output) = try await runScript(tree, "--version")
            XCTAssertEqual(status, 0, output)
            XCTAssertEqual(tree.calls.filter { $0.hasPrefix("swift build") }.count, builds + 1, "\(change) changed: \(tree.calls)")
            // SwiftPM does not know the order file: the script removes the product so it is linked again.
            let product = change.hasSuffix(".link-order") ? "gone" : "kept"
            XCTAssertEqual(tree.calls.last { $0.hasPrefix("swift build") }?.hasSuffix(" product=\(product)"), true,
                           "\(change) changed: \(tree.calls)")
        }
    }

    /// Objects built with other release flags are removed before the build (SwiftPM kept objects
    /// built without -function-sections after the flag came); with the same flags they stay.
    func testObjectsBuiltWithOtherFlagsAreCompiledAgain() async throws {
        let tree = try makeTree()
        _ = try await runScript(tree, "--version")
        let objects = tree.repository.appendingPathComponent(".build/triple/release/ProxyEngine.build")
        try FileManager.default.createDirectory(at: objects, withIntermediateDirectories: true)
        let object = objects.appendingPathComponent("Exchange.swift.o")
        let flags = tree.repository.appendingPathComponent(".build/stamps/release-flags")
        let current = try String(contentsOf: flags, encoding: .utf8)
        XCTAssertTrue(current.contains("-function-sections"), current)

        for (recorded, kept) in [(current, true), ("-c release", false)] {
            try settle(tree)
            try "object".write(to: object, atomically: true, encoding: .utf8)
            try recorded.write(to: flags, atomically: true, encoding: .utf8)
            try "// edited\n".write(to: tree.repository.appendingPathComponent("Package.swift"), atomically: false,
                                  encoding: .utf8)
            let (status, output) = try await runScript(tree, "--version")
            XCTAssertEqual(status, 0, output)
            XCTAssertEqual(FileManager.default.fileExists(atPath: object.path), kept, "flags recorded: \(recorded)")
            XCTAssertEqual(try String(contentsOf: flags, encoding: .utf8), current)
        }
    }

    /// A failed build leaves no stamp: the script fails, and the next start tries to build again
    /// instead of running the old binary.
    func testAFailedBuildIsRetriedNextTime() async throws {
        let tree = try makeTree()
        _ = try await runScript(tree, "--version")
        try settle(tree)
        try "// edited\n".write(to: tree.repository.appendingPathComponent("Sources/proxyapp/main.swift"), atomically: false, encoding: .utf8)
        let failFlag = tree.repository.deletingLastPathComponent().appendingPathComponent("fail-build")
        try "".write(to: failFlag, atomically: true, encoding: .utf8)
        let (failed, failedOutput) = try await runScript(tree, "--version")
        XCTAssertNotEqual(failed, 0, failedOutput)
        XCTAssertTrue(failedOutput.contains("swift build -c release"), failedOutput)
        XCTAssertFalse(failedOutput.contains("cwd="), "the old binary must not run after a failed build: \(failedOutput)")

        try FileManager.default.removeItem(at: failFlag)
        let builds = tree.calls.filter { $0.hasPrefix("swift build") }.count
        let (retried, retriedOutput) = try await runScript(tree, "--version")
        XCTAssertEqual(retried, 0, retriedOutput)
        XCTAssertEqual(tree.calls.filter { $0.hasPrefix("swift build") }.count, builds + 1, "\(tree.calls)")
    }
}
