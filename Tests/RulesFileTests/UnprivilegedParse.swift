import Foundation
import RulesFile
import XCTest

#if canImport(Glibc)
import Glibc
#endif

/// Parses a rules text as user `nobody`, for checks that root would pass whatever the file
/// modes say (root reads every file, and CI runs as root).
///
/// The parse runs in a child: this test binary run again with one test selected
/// (`UnprivilegedParseChild/testParseAsNobody`), which drops to uid and gid 65534 before parsing
/// and writes each issue's description, one a line, to a file this process reads. A child that
/// skips, crashes or cannot drop its privileges leaves no answer, and the caller's test fails.
enum UnprivilegedParse {
    static let yamlVariable = "RULES_TESTS_UNPRIVILEGED_YAML"
    static let baseVariable = "RULES_TESTS_UNPRIVILEGED_BASE"
    static let answerVariable = "RULES_TESTS_UNPRIVILEGED_ANSWER"
    /// Written first in the answer file, so an empty answer is told apart from none.
    static let answerHeader = "parsed as nobody"
    /// Only a safety net for a stuck child: a parse takes milliseconds.
    static let childBound: TimeInterval = 120

    /// The issues `yaml` is refused with when parsed by `nobody` with `base` as its folder; nil
    /// after recording a failure that says what the child did instead.
    static func issues(_ yaml: String, base: String, file: StaticString = #filePath, line: UInt = #line) throws
        -> [String]?
    {
        let answer = base + "/unprivileged-answer"
        XCTAssertTrue(FileManager.default.createFile(atPath: answer, contents: nil), file: file, line: line)
        // nobody must reach the folder and write the answer; the file under test keeps its mode.
        XCTAssertEqual(chmod(base, 0o755), 0, file: file, line: line)
        XCTAssertEqual(chmod(answer, 0o666), 0, file: file, line: line)
        let output = base + "/unprivileged-output"
        XCTAssertTrue(FileManager.default.createFile(atPath: output, contents: nil), file: file, line: line)

        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        child.arguments = ["RulesFileTests.UnprivilegedParseChild/testParseAsNobody"]
        var environment = ProcessInfo.processInfo.environment
        environment[yamlVariable] = yaml
        environment[baseVariable] = base
        environment[answerVariable] = answer
        child.environment = environment
        let outputHandle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        defer { try? outputHandle.close() }
        child.standardOutput = outputHandle
        child.standardError = outputHandle
        try child.run()
        let deadline = Date().addingTimeInterval(childBound)
        while child.isRunning, Date() < deadline { usleep(10_000) }
        if child.isRunning {
            kill(child.processIdentifier, SIGKILL)
            child.waitUntilExit()
        }
        let childOutput = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let lines = ((try? String(contentsOfFile: answer, encoding: .utf8)) ?? "")
            .split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard lines.first == answerHeader else {
            XCTFail("the child parsing as nobody gave no answer (exit \(child.terminationStatus)):\n\(childOutput)",
                    file: file, line: line)
            return nil
        }
        return lines.dropFirst().filter { !$0.isEmpty }
    }
}

/// Not a test: the body of the child process `UnprivilegedParse` starts. Run normally (no
/// variables set), it skips itself.
final class UnprivilegedParseChild: XCTestCase {
    func testParseAsNobody() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let yaml = environment[UnprivilegedParse.yamlVariable],
              let base = environment[UnprivilegedParse.baseVariable],
              let answer = environment[UnprivilegedParse.answerVariable]
        else {
            throw XCTSkip("helper run only as the child process of UnprivilegedParse")
        }
        // Groups first, then gid, then uid: after setuid nothing else may be dropped.
        guard setgroups(0, nil) == 0, setgid(65534) == 0, setuid(65534) == 0, getuid() == 65534, geteuid() == 65534
        else {
            return XCTFail("cannot drop to nobody: \(String(cString: strerror(errno)))")
        }
        var lines = [UnprivilegedParse.answerHeader]
        do {
            _ = try RulesFile.parse(yaml, file: "rules.yaml", baseDirectory: base)
        } catch {
            lines += error.issues.map { $0.description(file: "rules.yaml") }
        }
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: answer))
    }
}
