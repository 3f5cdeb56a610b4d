import Glibc
import XCTest
@testable import TerminalUI

/// Drives TerminalSession on a pseudo-terminal: the slave is "the terminal", the master sees
/// what the session wrote.
final class TerminalSessionTests: XCTestCase {
    private var master: Int32 = -1
    private var slave: Int32 = -1

    override func setUpWithError() throws {
        // posix_openpt/unlockpt/ptsname are not in Swift's Glibc module; on Linux they are
        // /dev/ptmx and two ioctls (the values of the _IOW/_IOR macros Swift cannot import).
        let unlockPTY: UInt = 0x4004_5431  // TIOCSPTLCK
        let ptyNumber: UInt = 0x8004_5430  // TIOCGPTN
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        XCTAssertGreaterThanOrEqual(master, 0)
        var unlock: Int32 = 0
        XCTAssertEqual(ioctl(master, unlockPTY, &unlock), 0)
        var number: Int32 = -1
        XCTAssertEqual(ioctl(master, ptyNumber, &number), 0)
        slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        XCTAssertGreaterThanOrEqual(slave, 0)
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
    }

    override func tearDown() {
        close(slave)
        close(master)
    }

    private func readMaster() -> [UInt8] {
        var all: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(master, $0.baseAddress, $0.count) }
            if count <= 0 { return all }
            all += buffer[0..<count]
        }
    }

    private func attributes() -> termios {
        var current = termios()
        XCTAssertEqual(tcgetattr(slave, &current), 0)
        return current
    }

    private func same(_ a: termios, _ b: termios) -> Bool {
        var a = a, b = b
        return memcmp(&a, &b, MemoryLayout<termios>.size) == 0
    }

    func testEnterRawModeAndRestoreExactly() throws {
        let before = attributes()
        let session = try TerminalSession(input: slave, output: slave)
        let raw = attributes()
        XCTAssertEqual(raw.c_lflag & tcflag_t(ECHO | ICANON | ISIG | IEXTEN), 0)
        XCTAssertNotEqual(before.c_lflag & tcflag_t(ECHO | ICANON | ISIG), 0, "the pty started cooked")
        XCTAssertEqual(raw.c_iflag & tcflag_t(ICRNL | IXON), 0)
        XCTAssertEqual(readMaster(), TerminalSession.enterSequence)

        session.restore()
        XCTAssertTrue(same(attributes(), before))
        XCTAssertEqual(readMaster(), TerminalSession.restoreSequence)

        session.restore()  // twice: harmless, nothing more written
        XCTAssertTrue(same(attributes(), before))
        XCTAssertEqual(readMaster(), [])
    }

    func testSecondSessionIsRefusedUntilTheFirstIsRestored() throws {
        let first = try TerminalSession(input: slave, output: slave)
        XCTAssertThrowsError(try TerminalSession(input: slave, output: slave)) {
            XCTAssertEqual($0 as? TerminalSessionError, .alreadyActive)
        }
        first.restore()
        let second = try TerminalSession(input: slave, output: slave)
        second.restore()
    }

    func testNotATerminalIsAClearError() throws {
        var pipeEnds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&pipeEnds), 0)
        defer { close(pipeEnds[0]); close(pipeEnds[1]) }
        XCTAssertThrowsError(try TerminalSession(input: pipeEnds[0], output: pipeEnds[1])) {
            XCTAssertEqual($0 as? TerminalSessionError, .notATerminal(fileDescriptor: pipeEnds[0]))
            XCTAssertTrue("\($0)".contains("--headless"))
        }
    }

    func testSizeComesFromTheTerminal() throws {
        var window = winsize(ws_row: 37, ws_col: 121, ws_xpixel: 0, ws_ypixel: 0)
        XCTAssertEqual(ioctl(master, UInt(TIOCSWINSZ), &window), 0)
        let session = try TerminalSession(input: slave, output: slave)
        defer { session.restore() }
        let size = session.size()
        XCTAssertEqual(size.width, 121)
        XCTAssertEqual(size.height, 37)
    }

    func testWritesAndReadsGoThroughThePty() throws {
        let session = try TerminalSession(input: slave, output: slave)
        defer { session.restore() }
        _ = readMaster()
        session.write(Array("hello".utf8))
        XCTAssertEqual(readMaster(), Array("hello".utf8))
        let typed: [UInt8] = [0x03, 0x1B, UInt8(ascii: "["), UInt8(ascii: "A")]  // Ctrl-C arrives as a byte in raw mode
        _ = typed.withUnsafeBytes { Glibc.write(master, $0.baseAddress, $0.count) }
        var decoder = KeyDecoder()
        XCTAssertEqual(decoder.feed(session.read(timeoutMilliseconds: -1) ?? []), [.control("c"), .up])
        XCTAssertEqual(session.read(timeoutMilliseconds: 0), [], "nothing typed: no bytes, not the end")
    }

    /// When the terminal goes away (the master side closes: a hang-up), reads say so.
    func testReadReportsAHangUp() throws {
        let session = try TerminalSession(input: slave, output: slave)
        defer { session.restore() }
        close(master)
        master = -1
        XCTAssertNil(session.read(timeoutMilliseconds: 1_000))
    }
}
