#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Dispatch

/// What went wrong taking over a terminal.
public enum TerminalSessionError: Error, Equatable, CustomStringConvertible {
    case notATerminal(fileDescriptor: Int32)
    case alreadyActive
    case systemCall(String, errno: Int32)

    public var description: String {
        switch self {
        case .notATerminal(let fd):
            return "file descriptor \(fd) is not a terminal; run the TUI in a terminal, or use `proxyapp run --headless`"
        case .alreadyActive:
            return "a terminal session is already active in this process; restore it before entering another"
        case .systemCall(let name, let code):
            return "\(name) failed: \(String(cString: strerror(code)))"
        }
    }
}

/// Owns the terminal while the TUI runs: raw mode (no echo, no line editing, no signals from
/// Ctrl-C, which arrives as a key), the alternate screen, a hidden cursor and SGR mouse reports.
///
/// `restore()` puts back exactly what was there (the saved termios, the main screen, the cursor,
/// mouse off). It is idempotent and also runs from SIGINT/SIGTERM/SIGHUP handlers and at exit,
/// so a quit, a kill or a `fatalError` on the main path never leaves the user's shell in raw mode.
/// One session at a time per process: the signal path needs its state in a global.
public final class TerminalSession: @unchecked Sendable {
    /// Sent on entering: alternate screen, hidden cursor, mouse button + SGR mouse reports.
    public static let enterSequence: [UInt8] = Array("\u{1B}[?1049h\u{1B}[?25l\u{1B}[?1000h\u{1B}[?1006h".utf8)
    /// Sent on restoring: mouse off, style reset, cursor shown, main screen back.
    public static let restoreSequence: [UInt8] = Array("\u{1B}[?1006l\u{1B}[?1000l\u{1B}[0m\u{1B}[?25h\u{1B}[?1049l".utf8)

    public let inputDescriptor: Int32
    public let outputDescriptor: Int32
    private var resizeSource: DispatchSourceSignal?
    private var previousActions: [(Int32, sigaction)] = []
    private var restored = false

    /// Takes over the terminal on `input` (termios) and `output` (escape sequences).
    ///
    /// With `restoreOnTermination` (the default), SIGINT, SIGTERM and SIGHUP restore the terminal
    /// and then kill the process as they would have. Pass false when the caller handles those
    /// signals itself (the proxy stops in order, then calls `restore()`). Crash signals (SIGSEGV,
    /// SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGABRT: a Swift trap, a `fatalError`) always restore the
    /// terminal first and then reach whatever handler was there before (the crash reporter).
    public init(input: Int32 = STDIN_FILENO, output: Int32 = STDOUT_FILENO, restoreOnTermination: Bool = true) throws {
        inputDescriptor = input
        outputDescriptor = output
        guard isatty(input) == 1 else { throw TerminalSessionError.notATerminal(fileDescriptor: input) }
        guard activeRestore.pointee.active == 0 else { throw TerminalSessionError.alreadyActive }
        var saved = termios()
        guard tcgetattr(input, &saved) == 0 else { throw TerminalSessionError.systemCall("tcgetattr", errno: errno) }
        var raw = Self.rawMode(from: saved)
        guard tcsetattr(input, TCSAFLUSH, &raw) == 0 else { throw TerminalSessionError.systemCall("tcsetattr", errno: errno) }
        _ = restoreBytes.count  // initialise the globals now, never first in a signal handler
        _ = previousCrashActions
        activeRestore.pointee = RestoreState(active: 1, input: input, output: output, saved: saved)
        installSignalHandlers(termination: restoreOnTermination)
        writeAll(Self.enterSequence)
    }

    deinit { restore() }

    /// The termios of raw mode: `cfmakeraw`'s flags, reads return after 0.1 s with what arrived.
    public static func rawMode(from saved: termios) -> termios {
        var raw = saved
        raw.c_iflag &= ~tcflag_t(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON)
        raw.c_oflag &= ~tcflag_t(OPOST)
        raw.c_lflag &= ~tcflag_t(ECHO | ECHONL | ICANON | ISIG | IEXTEN)
        raw.c_cflag &= ~tcflag_t(CSIZE | PARENB)
        raw.c_cflag |= tcflag_t(CS8)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 0
            cc[Int(VTIME)] = 1
        }
        return raw
    }

    /// Puts the terminal back as it was. Safe to call more than once.
    public func restore() {
        guard !restored else { return }
        restored = true
        resizeSource?.cancel()
        resizeSource = nil
        restoreTerminalNow()
        for (signalNumber, action) in previousActions {
            var previous = action
            sigaction(signalNumber, &previous, nil)
        }
        previousActions = []
    }

    /// Lends the terminal to another program (an editor) until `resume()`: the main screen,
    /// the cursor and the modes the session found are back meanwhile.
    public func suspend() {
        guard !restored, activeRestore.pointee.active == 1 else { return }
        writeAll(Self.restoreSequence)
        var saved = activeRestore.pointee.saved
        tcsetattr(inputDescriptor, TCSAFLUSH, &saved)
    }

    /// Takes the terminal back after `suspend()`: raw mode and the alternate screen again (the
    /// caller repaints all of it).
    public func resume() {
        guard !restored, activeRestore.pointee.active == 1 else { return }
        var raw = Self.rawMode(from: activeRestore.pointee.saved)
        tcsetattr(inputDescriptor, TCSAFLUSH, &raw)
        writeAll(Self.enterSequence)
    }

    /// The terminal's size in cells; 80×24 when the terminal does not say.
    public func size() -> (width: Int, height: Int) {
        var window = winsize()
        if ioctl(outputDescriptor, UInt(TIOCGWINSZ), &window) == 0 || ioctl(inputDescriptor, UInt(TIOCGWINSZ), &window) == 0,
           window.ws_col > 0, window.ws_row > 0 {
            return (Int(window.ws_col), Int(window.ws_row))
        }
        return (80, 24)
    }

    /// Calls `handler` on `queue` after each SIGWINCH (the terminal was resized). One handler;
    /// a second call replaces the first. Stops at `restore()`.
    public func onResize(queue: DispatchQueue = .main, _ handler: @escaping @Sendable () -> Void) {
        resizeSource?.cancel()
        // No SIG_IGN here: Linux drops ignored signals before libdispatch's signalfd sees them.
        let source = DispatchSource.makeSignalSource(signal: SIGWINCH, queue: queue)
        source.setEventHandler(handler: handler)
        source.resume()
        resizeSource = source
    }

    /// Writes all of `bytes` to the output, retrying after interrupts and short writes.
    public func write(_ bytes: [UInt8]) { writeAll(bytes) }

    /// Reads what is available, waiting up to `timeoutMilliseconds` for the first byte
    /// (-1: wait forever). Returns no bytes on timeout, and nil once the terminal is gone
    /// (hung up, closed, or failing), so a loop on it can end instead of spinning.
    public func read(timeoutMilliseconds: Int32) -> [UInt8]? {
        var descriptor = pollfd(fd: inputDescriptor, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, timeoutMilliseconds)
        if ready < 0 { return errno == EINTR ? [] : nil }
        if ready == 0 { return [] }
        if descriptor.revents & Int16(POLLIN) == 0 { return nil }  // POLLHUP, POLLERR or POLLNVAL alone
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { Glibc.read(inputDescriptor, $0.baseAddress, $0.count) }
        if count > 0 { return Array(buffer[0..<count]) }
        if count < 0, errno == EINTR || errno == EAGAIN { return [] }
        return nil  // end of file, or EIO from a terminal that hung up
    }

    private func writeAll(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { writeFully(outputDescriptor, $0.baseAddress, $0.count) }
    }

    private func installSignalHandlers(termination: Bool) {
        for signalNumber in termination ? [SIGINT, SIGTERM, SIGHUP] : [] {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signalNumber in
                restoreTerminalNow()
                signal(signalNumber, SIG_DFL)
                raise(signalNumber)
            }
            sigemptyset(&action.sa_mask)
            var previous = sigaction()
            sigaction(signalNumber, &action, &previous)
            previousActions.append((signalNumber, previous))
        }
        for signalNumber in crashSignals {
            var action = sigaction()
            action.sa_flags = SA_SIGINFO
            action.__sigaction_handler.sa_sigaction = { signalNumber, info, _ in
                restoreTerminalNow()
                // Put the previous handler back. A fault (si_code > 0, from the kernel) repeats
                // when the handler returns and then reaches it with the faulting context intact;
                // a sent signal (kill, raise, abort: si_code <= 0) is raised again.
                guard signalNumber >= 0, signalNumber < 65 else { return }
                sigaction(signalNumber, &previousCrashActions[Int(signalNumber)], nil)
                if (info?.pointee.si_code ?? 0) <= 0 { raise(signalNumber) }
            }
            sigemptyset(&action.sa_mask)
            var previous = sigaction()
            sigaction(signalNumber, &action, &previous)
            previousCrashActions[Int(signalNumber)] = previous
            previousActions.append((signalNumber, previous))
        }
        if !atExitInstalled.pointee {
            atExitInstalled.pointee = true
            atexit { restoreTerminalNow() }
        }
    }
}

/// What the signal and exit paths need, in memory allocated before any handler is installed:
/// reading it involves no lazy initialisation, locks or allocation.
private struct RestoreState {
    var active: Int32 = 0
    var input: Int32 = -1
    var output: Int32 = -1
    var saved = termios()
}

nonisolated(unsafe) private let activeRestore: UnsafeMutablePointer<RestoreState> = {
    let pointer = UnsafeMutablePointer<RestoreState>.allocate(capacity: 1)
    pointer.initialize(to: RestoreState())
    return pointer
}()

/// The signals of a crash: a Swift trap is SIGILL or SIGTRAP, `fatalError` ends in one of them too.
private let crashSignals: [Int32] = [SIGSEGV, SIGBUS, SIGILL, SIGTRAP, SIGFPE, SIGABRT]

/// The crash handlers found at `init`, by signal number: what a crash reaches after restoring.
nonisolated(unsafe) private let previousCrashActions: UnsafeMutablePointer<sigaction> = {
    let pointer = UnsafeMutablePointer<sigaction>.allocate(capacity: 65)
    pointer.initialize(repeating: sigaction(), count: 65)
    return pointer
}()

nonisolated(unsafe) private let atExitInstalled: UnsafeMutablePointer<Bool> = {
    let pointer = UnsafeMutablePointer<Bool>.allocate(capacity: 1)
    pointer.initialize(to: false)
    return pointer
}()

nonisolated(unsafe) private let restoreBytes: UnsafeMutableBufferPointer<UInt8> = {
    let buffer = UnsafeMutableBufferPointer<UInt8>.allocate(capacity: TerminalSession.restoreSequence.count)
    _ = buffer.initialize(from: TerminalSession.restoreSequence)
    return buffer
}()

/// Async-signal-safe: write(2) and tcsetattr(3) on preallocated state, once.
private func restoreTerminalNow() {
    let state = activeRestore
    guard state.pointee.active == 1 else { return }
    state.pointee.active = 0
    writeFully(state.pointee.output, UnsafeRawPointer(restoreBytes.baseAddress), restoreBytes.count)
    tcsetattr(state.pointee.input, TCSAFLUSH, &state.pointee.saved)
}

private func writeFully(_ descriptor: Int32, _ start: UnsafeRawPointer?, _ count: Int) {
    guard let start else { return }
    var offset = 0
    while offset < count {
        let written = Glibc.write(descriptor, start + offset, count - offset)
        if written > 0 { offset += written } else if written < 0 && errno == EINTR { continue } else { return }
    }
}
