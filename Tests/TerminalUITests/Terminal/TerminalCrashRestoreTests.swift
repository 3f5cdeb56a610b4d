import Foundation
import Glibc
import XCTest
@testable import TerminalUI

/// The crash path: a process that dies of a Swift trap, a fatal signal or SIGTERM while a
/// `TerminalSession` holds the terminal leaves it restored. The crash happens in a child process
/// (this test binary, running `TerminalCrashChild`) whose terminal is a pty this test holds.
final class TerminalCrashRestoreTests: XCTestCase {
    private func openPTY() throws -> (master: Int32, slavePath: String) {
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        guard master >= 0 else { throw XCTSkip("no /dev/ptmx here") }
        var unlock: Int32 = 0
        XCTAssertEqual(ioctl(master, 0x4004_5431, &unlock), 0)  // TIOCSPTLCK
        var number: Int32 = -1
        XCTAssertEqual(ioctl(master, 0x8004_5430, &number), 0)  // TIOCGPTN
        return (master, "/dev/pts/\(number)")
    }

    private func crashChild(_ how: String) throws {
        let (master, slavePath) = try openPTY()
        defer { close(master) }
        let slave = open(slavePath, O_RDWR | O_NOCTTY)  // held open, to read its termios after
        defer { close(slave) }
        var before = termios()
        XCTAssertEqual(tcgetattr(slave, &before), 0)

        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        child.arguments = ["TerminalUITests.TerminalCrashChild/testCrashInsideSession"]
        var environment = ProcessInfo.processInfo.environment
        environment[TerminalCrashChild.ptyVariable] = slavePath
        environment[TerminalCrashChild.howVariable] = how
        environment["SWIFT_BACKTRACE"] = "enable=no"  // a crash report would take seconds
        child.environment = environment
        child.standardOutput = FileHandle.nullDevice
        child.standardError = FileHandle.nullDevice
        try child.run()
        if how == "term" {
            // Wait until the child has taken the terminal (it raw-modes it first), then ask it to stop.
            let entered = Date().addingTimeInterval(20)
            var raw = termios()
            repeat {
                usleep(10_000)
                _ = tcgetattr(slave, &raw)
            } while raw.c_lflag & tcflag_t(ICANON) != 0 && Date() < entered
            kill(child.processIdentifier, SIGTERM)
        }
        let deadline = Date().addingTimeInterval(30)
        while child.isRunning, Date() < deadline { usleep(10_000) }
        if child.isRunning { kill(child.processIdentifier, SIGKILL) }
        child.waitUntilExit()
        XCTAssertEqual(child.terminationReason, .uncaughtSignal, "the child crashed (\(how))")

        var after = termios()
        XCTAssertEqual(tcgetattr(slave, &after), 0)
        XCTAssertNotEqual(after.c_lflag & tcflag_t(ICANON), 0, "cooked mode is back after the crash (\(how))")
        XCTAssertNotEqual(after.c_lflag & tcflag_t(ECHO), 0)
        var written: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(master, $0.baseAddress, $0.count) }
            if count <= 0 { break }
            written += buffer[0..<count]
        }
        XCTAssertEqual(Array(written.suffix(TerminalSession.restoreSequence.count)), TerminalSession.restoreSequence,
                       "the main screen, cursor and mouse were restored (\(how))")
    }

    func testSwiftTrapRestoresTheTerminal() throws {
        try crashChild("trap")
    }

    func testSegfaultSignalRestoresTheTerminal() throws {
        try crashChild("segv")
    }

    /// SIGTERM (a `kill`, a closing tmux) restores the terminal and still ends the process.
    func testTerminationSignalRestoresTheTerminal() throws {
        try crashChild("term")
    }
}

/// Not a test: the body of the child process `TerminalCrashRestoreTests` starts.
final class TerminalCrashChild: XCTestCase {
    static let ptyVariable = "TERMINALUI_CRASH_CHILD_PTY"
    static let howVariable = "TERMINALUI_CRASH_CHILD_HOW"

    func testCrashInsideSession() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let path = environment[Self.ptyVariable], let how = environment[Self.howVariable] else {
            throw XCTSkip("helper run only as the child process of TerminalCrashRestoreTests")
        }
        let terminal = open(path, O_RDWR | O_NOCTTY)
        let session = try TerminalSession(input: terminal, output: terminal)
        _ = session
        if how == "term" {
            sleep(30)  // the parent sends SIGTERM
        } else if how == "segv" {
            raise(SIGSEGV)
        } else {
            let values: [Int] = []
            _ = values[values.count + Int(terminal)]  // out of range: a Swift trap
        }
        XCTFail("still alive after crashing")
    }
}
