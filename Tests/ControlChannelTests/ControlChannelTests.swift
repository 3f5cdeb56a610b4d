@testable import ControlChannel
import Foundation
import TestSupport
import XCTest

/// The control channel end to end on a real Unix socket: requests and replies in order, the
/// socket's mode, bad and endless input answered in words, the connection bound, a stale socket
/// replaced but a live one never taken, long data directories.
final class ControlChannelTests: XCTestCase {
    private func withServer(idleSeconds: Int = 60, _ handler: @escaping ControlServer.Handler = { request, _ in
        ControlReply(ok: true, lines: ["\(request.command) \(request.ids ?? [])"])
    }, _ body: (ControlServer, TemporaryDirectory) throws -> Void) throws {
        let scratch = try TemporaryDirectory("proxyapp-control")
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.file("run"), withIntermediateDirectories: true)
        let server = try ControlServer(path: ControlSocket.path(forDataDirectory: scratch.url.path), idleSeconds: idleSeconds,
                                       handler: handler)
        defer { server.stop() }
        try body(server, scratch)
    }

    func testRequestsAreAnsweredInOrderOnOneConnection() throws {
        try withServer { server, scratch in
            XCTAssertEqual(server.path, scratch.file("run/control.sock"))
            XCTAssertTrue(ControlClient.isAnswering(path: server.path))
            let reply = try ControlClient.send(ControlRequest(command: "replay", ids: [3, 1]), path: server.path)
            XCTAssertEqual(reply, ControlReply(ok: true, lines: ["replay [3, 1]"]))
            let connection = try RawUnixConnection(path: server.path)
            try connection.send("{\"command\":\"a\"}\n\n{\"command\":\"b\",\"ids\":[7]}\n")
            XCTAssertEqual(try connection.readLines(2).map { try JSONDecoder().decode(ControlReply.self, from: Data($0.utf8)).lines },
                           [["a []"], ["b [7]"]])
        }
    }

    func testTheSocketIsPrivateAndRemovedWhenStopped() throws {
        try withServer { server, _ in
            var info = stat()
            XCTAssertEqual(stat(server.path, &info), 0)
            XCTAssertEqual(info.st_mode & 0o777, 0o600)
            server.stop()
            XCTAssertFalse(FileManager.default.fileExists(atPath: server.path))
            XCTAssertFalse(ControlClient.isAnswering(path: server.path))
            XCTAssertThrowsError(try ControlClient.send(ControlRequest(command: "ping"), path: server.path)) { error in
                XCTAssertTrue("\(error)".hasSuffix("no proxy is running on this data directory"), "\(error)")
            }
        }
    }

    func testGarbageIsAnsweredInWordsAndTheConnectionGoesOn() throws {
        try withServer { server, _ in
            let connection = try RawUnixConnection(path: server.path)
            try connection.send("not json\n{\"ids\":[1]}\n[1,2]\n{\"command\":\"ok\"}\n")
            let replies = try connection.readLines(4).map { try JSONDecoder().decode(ControlReply.self, from: Data($0.utf8)) }
            XCTAssertEqual(replies.prefix(3).map(\.ok), [false, false, false])
            XCTAssertEqual(replies[0].error, "not a control request: one JSON object per line, with a \"command\"")
            XCTAssertEqual(replies[3], ControlReply(ok: true, lines: ["ok []"]))
        }
    }

    func testAnEndlessLineIsRefusedAndClosed() throws {
        try withServer { server, _ in
            let connection = try RawUnixConnection(path: server.path)
            let chunk = String(repeating: "x", count: 1 << 20)
            var sent = 0
            while sent <= ControlServer.maximumLineBytes + (2 << 20), (try? connection.send(chunk)) != nil {
                sent += chunk.utf8.count
            }
            let lines = try connection.readLines(1)
            let reply = try JSONDecoder().decode(ControlReply.self, from: Data(lines[0].utf8))
            XCTAssertEqual(reply.error, "a control request longer than 96 MiB was refused")
            XCTAssertTrue(connection.readsEndOfInput(), "the connection is closed after the refusal")
        }
    }

    /// A line must arrive whole within the idle time: a byte at a time keeps no slot.
    func testALineDrippingInIsCutOff() throws {
        try withServer(idleSeconds: 1) { server, _ in
            let connection = try RawUnixConnection(path: server.path)
            for _ in 0..<20 {
                guard (try? connection.send("{")) != nil else { break }
                usleep(150_000)
            }
            XCTAssertTrue(connection.readsEndOfInput(), "closed once the line took longer than the idle time")
        }
    }

    /// A client that hangs up while its command runs cancels it (Ctrl-C on `proxyapp replay`).
    func testHangingUpCancelsTheRunningCommand() throws {
        let started = DispatchSemaphore(value: 0)
        let cancelled = DispatchSemaphore(value: 0)
        try withServer({ _, cancellation in
            started.signal()
            for _ in 0..<500 where !cancellation.isCancelled { usleep(10_000) }
            if cancellation.isCancelled { cancelled.signal() }
            return ControlReply(ok: true)
        }) { server, _ in
            let connection = try RawUnixConnection(path: server.path)
            try connection.send("{\"command\":\"long\"}\n")
            XCTAssertEqual(started.wait(timeout: .now() + 10), .success)
            connection.hangUp()
            XCTAssertEqual(cancelled.wait(timeout: .now() + 10), .success, "the command saw the cancellation")
        }
    }

    /// The client trusts a socket in the shared fallback folder only while that folder is this
    /// user's own (another user could listen there first otherwise), and refuses commands larger
    /// than the channel takes before sending anything.
    func testTheClientRefusesAFallbackFolderOthersCouldUseAndOversizedCommands() throws {
        let deep = "/var/lib/" + String(repeating: "refuse-folder/", count: 10)
        let path = ControlSocket.path(forDataDirectory: deep)
        let server = try ControlServer(path: path) { _, _ in ControlReply(ok: true, lines: ["mine"]) }
        defer { server.stop() }
        XCTAssertEqual(try ControlClient.send(ControlRequest(command: "x"), path: path).lines, ["mine"])
        XCTAssertEqual(chmod(ControlSocket.fallbackFolder, 0o777), 0)
        defer { chmod(ControlSocket.fallbackFolder, 0o700) }
        XCTAssertFalse(ControlClient.isAnswering(path: path))
        XCTAssertThrowsError(try ControlClient.send(ControlRequest(command: "x"), path: path)) { error in
            XCTAssertTrue("\(error)".contains("is not a private folder of this user"), "\(error)")
        }
        chmod(ControlSocket.fallbackFolder, 0o700)
        let huge = ControlHTTPRequest(method: "POST", url: "http://a/", headers: [], body: [UInt8](repeating: 7, count: 80 << 20))
        XCTAssertThrowsError(try ControlClient.send(ControlRequest(command: "send", request: huge), path: path)) { error in
            XCTAssertTrue("\(error)".hasPrefix("the command is too large for the control channel"), "\(error)")
        }
    }

    func testOneConnectionBeyondTheLimitIsToldBusy() throws {
        try withServer { server, _ in
            var held: [RawUnixConnection] = []
            for _ in 0..<ControlServer.maximumConnections {
                let connection = try RawUnixConnection(path: server.path)
                try connection.send("{\"command\":\"hello\"}\n")
                _ = try connection.readLines(1)  // served: its thread is running
                held.append(connection)
            }
            let extra = try RawUnixConnection(path: server.path)
            let reply = try JSONDecoder().decode(ControlReply.self, from: Data(try extra.readLines(1)[0].utf8))
            XCTAssertEqual(reply.error, "the control channel is busy (8 connections): try again")
            held.removeAll()  // closing them frees the slots
            var answered = false
            for _ in 0..<200 where !answered {
                answered = (try? ControlClient.send(ControlRequest(command: "again"), path: server.path))?.ok == true
                if !answered { usleep(10_000) }
            }
            XCTAssertTrue(answered)
        }
    }

    func testAStaleSocketIsReplacedButALiveOneIsNotTaken() throws {
        let scratch = try TemporaryDirectory("proxyapp-control")
        defer { scratch.remove() }
        try FileManager.default.createDirectory(atPath: scratch.file("run"), withIntermediateDirectories: true)
        let path = ControlSocket.path(forDataDirectory: scratch.url.path)
        // A socket file nobody listens on, as a proxy killed with -9 leaves it.
        let stale = socket(AF_UNIX, CInt(SOCK_STREAM.rawValue), 0)
        XCTAssertEqual(ControlSocket.withAddress(path) { bind(stale, $0, $1) }, 0)
        close(stale)
        XCTAssertTrue(FileManager.default.fileExists(atPath: path))
        let first = try ControlServer(path: path) { _, _ in ControlReply(ok: true, lines: ["first"]) }
        defer { first.stop() }
        XCTAssertEqual(try ControlClient.send(ControlRequest(command: "x"), path: path).lines, ["first"])
        XCTAssertThrowsError(try ControlServer(path: path) { _, _ in ControlReply(ok: true) }) { error in
            XCTAssertEqual("\(error)", "another proxy on this data directory has it (\(path))")
        }
        XCTAssertEqual(try ControlClient.send(ControlRequest(command: "x"), path: path).lines, ["first"])
    }

    func testADeepDataDirectoryUsesAPrivateFolderUnderTmp() throws {
        let deep = "/var/lib/" + String(repeating: "deep-folder/", count: 10)
        let path = ControlSocket.path(forDataDirectory: deep)
        XCTAssertTrue(path.hasPrefix("/tmp/proxyapp-control-\(getuid())/"), path)
        XCTAssertLessThanOrEqual(path.utf8.count, ControlSocket.maximumPathBytes)
        XCTAssertEqual(path, ControlSocket.path(forDataDirectory: deep), "server and client compute the same path")
        XCTAssertNotEqual(path, ControlSocket.path(forDataDirectory: deep + "x"))
        let server = try ControlServer(path: path) { _, _ in ControlReply(ok: true, lines: ["deep"]) }
        defer { server.stop() }
        var info = stat()
        XCTAssertEqual(lstat(ControlSocket.fallbackFolder, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o700)
        XCTAssertEqual(try ControlClient.send(ControlRequest(command: "x"), path: path).lines, ["deep"])
    }

    func testHTTPMessagesCarryBytesAndHeaderOrder() throws {
        let request = ControlHTTPRequest(method: "POST", url: "https://example.com/a", headers: [("B", "2"), ("A", "1"), ("B", "3")],
                                         body: [0, 255, 10, 13])
        let decoded = try JSONDecoder().decode(ControlHTTPRequest.self, from: try JSONEncoder().encode(request))
        XCTAssertEqual(decoded.headerPairs.map { "\($0.0)=\($0.1)" }, ["B=2", "A=1", "B=3"])
        XCTAssertEqual(decoded.bodyBytes, [0, 255, 10, 13])
    }
}

/// A client connection that writes and reads raw bytes (for input `ControlClient` never sends).
private final class RawUnixConnection {
    private let descriptor: CInt
    private var buffer: [UInt8] = []

    init(path: String) throws {
        descriptor = socket(AF_UNIX, CInt(SOCK_STREAM.rawValue), 0)
        guard ControlSocket.withAddress(path, { connect(descriptor, $0, $1) }) == 0 else {
            close(descriptor)
            throw POSIXError(.ECONNREFUSED)
        }
        ControlSocket.setTimeout(descriptor, seconds: 10, option: SO_RCVTIMEO)
        ControlSocket.setTimeout(descriptor, seconds: 10, option: SO_SNDTIMEO)
    }

    deinit { close(descriptor) }

    /// Closes both ways at once, as a client killed with Ctrl-C does.
    func hangUp() { shutdown(descriptor, CInt(SHUT_RDWR)) }

    func send(_ text: String) throws {
        guard ControlSocket.writeAll(descriptor, Array(text.utf8)) else { throw POSIXError(.EPIPE) }
    }

    /// `count` lines, each within 10 seconds; throws when one does not come.
    func readLines(_ count: Int) throws -> [String] {
        try (0..<count).map { _ in
            guard let line = ControlSocket.readLine(descriptor, buffer: &buffer, limit: 1 << 20) else {
                throw POSIXError(.ETIMEDOUT)
            }
            return String(decoding: line, as: UTF8.self)
        }
    }

    /// True when the server closed the connection within 10 seconds: reads end, or are reset
    /// (it closed with bytes of ours unread); false on a timeout.
    func readsEndOfInput() -> Bool {
        var byte: UInt8 = 0
        let count = recv(descriptor, &byte, 1, 0)
        return count == 0 || (count < 0 && errno == ECONNRESET)
    }
}
