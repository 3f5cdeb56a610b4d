import ChildProcess
import ControlChannel
import Foundation
import ProxyModel
import TestSupport
import XCTest

/// Breakpoints of a running `proxyapp run --intercept` reached the way an attached TUI reaches
/// them: its control channel lists what is held while curl waits, accepts, kills, changes the
/// filter; `--intercept-timeout` lets a forgotten hold go on; a bad `--intercept` is a usage error.
final class BreakpointControlEndToEndTests: XCTestCase {
    private func ask(_ request: ControlRequest, data: URL) throws -> ControlReply {
        try ControlClient.send(request, path: ControlSocket.path(forDataDirectory: data.path), timeoutSeconds: 20)
    }

    private func held(data: URL, count: Int) async throws -> [HeldExchange] {
        for _ in 0..<1_000 {
            let held = try ask(ControlRequest(command: "holds"), data: data).held ?? []
            if held.count >= count { return held }
            try await Task.sleep(nanoseconds: 10_000_000)
        }
        XCTFail("expected \(count) held exchanges")
        return []
    }

    func testHoldsAreListedAndDecidedThroughTheControlChannel() async throws {
        let executable = try proxyAppExecutable()
        let scratch = try makeTemporaryDirectory("breakpoints-cli").url
        let origin = try await TestOrigin.start()
        defer { Task { await origin.shutdown() } }
        let data = scratch.appendingPathComponent("data")
        let proxy = try await ProxyAppProcess.startHeadless(executable: executable, dataDirectory: data,
                                                           arguments: ["--intercept", "~q & ~u /echo"])
        addTeardownBlock { proxy.killHard() }

        let port = proxy.port, echo = origin.url("/echo")
        let waiting = Task { try await Curl.fetch(viaProxy: port, echo, ["--data-binary", "one"]) }
        var holds = try await held(data: data, count: 1)
        XCTAssertEqual(holds.first?.side, "request")
        XCTAssertEqual(holds.first?.url, origin.url("/echo"))
        XCTAssertEqual(try ask(ControlRequest(command: "holds"), data: data).filter, "~q & ~u /echo")
        XCTAssertEqual(origin.log.requests.count, 0)
        XCTAssertEqual(try ask(ControlRequest(command: "accept", ids: [Int64(holds[0].id)]), data: data).lines, ["accepted 1"])
        let accepted = try await waiting.value
        XCTAssertEqual(accepted.bodyText, "one")

        // Edited through the channel: `held` shows it as it will be forwarded, `edit` sends it so.
        let toEdit = Task { try await Curl.fetch(viaProxy: port, echo, ["--data-binary", "before"]) }
        holds = try await held(data: data, count: 1)
        let shown = try XCTUnwrap(try ask(ControlRequest(command: "held", ids: [Int64(holds[0].id)]), data: data).heldRequest)
        XCTAssertEqual(shown.bodyBytes, Array("before".utf8))
        let changed = ControlHTTPRequest(method: "POST", url: shown.url, headers: shown.headerPairs, body: Array("after!".utf8))
        XCTAssertEqual(try ask(ControlRequest(command: "edit", ids: [Int64(holds[0].id)], request: changed), data: data).lines,
                       ["edited 1"])
        let afterEdit = try await toEdit.value
        XCTAssertEqual(afterEdit.bodyText, "after!")

        let killed = Task { try await Curl.fetch(viaProxy: port, echo) }
        holds = try await held(data: data, count: 1)
        XCTAssertEqual(try ask(ControlRequest(command: "kill", ids: [Int64(holds[0].id)]), data: data).lines, ["killed 1"])
        let refused = try await killed.value
        XCTAssertEqual(refused.status, 502)

        // A held response, shown and edited through the channel (an attached TUI's `R`).
        XCTAssertEqual(try ask(ControlRequest(command: "intercept", filter: "~s & ~u /bytes"), data: data).lines,
                       ["intercept: ~s & ~u /bytes"])
        let bytes = origin.url("/bytes/20")
        let responseHeld = Task { try await Curl.fetch(viaProxy: port, bytes) }
        holds = try await held(data: data, count: 1)
        XCTAssertEqual(holds.first?.side, "response")
        let responseID = Int64(holds[0].id)
        let shownResponse = try XCTUnwrap(try ask(ControlRequest(command: "held", ids: [responseID]), data: data).heldResponse)
        XCTAssertEqual(shownResponse.status, 200)
        XCTAssertEqual(shownResponse.bodyBytes.map { Data($0) }, PatternBytes.data(count: 20))
        let interim = ControlHTTPResponse(status: 101, reason: "Switching", headers: [], body: [])
        let refusedEdit = try ask(ControlRequest(command: "edit", ids: [responseID], response: interim), data: data)
        XCTAssertEqual(refusedEdit.error, "the edited response cannot be sent: the status 101 is not a final one: use 200 to 599")
        var malformed = ControlHTTPResponse(status: 200, reason: "OK", headers: [("X-A", "1")], body: [])
        malformed.headers.append(["only a name"])
        XCTAssertEqual(try ask(ControlRequest(command: "edit", ids: [responseID], response: malformed), data: data).error,
                       "edit needs the request or the response to send: headers as [name, value] pairs, the body in base64")
        let asRequest = ControlHTTPRequest(method: "GET", url: bytes, headers: [], body: [])
        XCTAssertFalse(try ask(ControlRequest(command: "edit", ids: [responseID], request: asRequest), data: data).ok)
        let newResponse = ControlHTTPResponse(status: 503, reason: "Edited Away", headers: [("Retry-After", "5")], body: Array("later".utf8))
        XCTAssertEqual(try ask(ControlRequest(command: "edit", ids: [responseID], response: newResponse), data: data).lines, ["edited 1"])
        let editedResponse = try await responseHeld.value
        XCTAssertEqual(editedResponse.status, 503)
        XCTAssertEqual(editedResponse.header("Retry-After"), "5")
        XCTAssertEqual(editedResponse.bodyText, "later")
        XCTAssertEqual(try ask(ControlRequest(command: "held", ids: [responseID]), data: data).error, "nothing is held with that id")

        let bad = try ask(ControlRequest(command: "intercept", filter: "~x"), data: data)
        XCTAssertFalse(bad.ok)
        XCTAssertTrue(bad.error?.hasPrefix("bad intercept expression: unknown operator ~x") == true, String(describing: bad.error))
        XCTAssertEqual(try ask(ControlRequest(command: "intercept", filter: ""), data: data).lines, ["intercept: off"])
        let free = try await Curl.fetch(viaProxy: proxy.port, origin.url("/echo"), ["--data-binary", "free"])
        XCTAssertEqual(free.bodyText, "free", "nothing is held with the filter cleared")

        // An edited request (the TUI's `R` in an attached TUI) is sent linked to its flow.
        var edited = ControlHTTPRequest(method: "PUT", url: origin.url("/echo"), headers: [("X-Edited", "yes")],
                                        body: Array("edited".utf8))
        edited.replayOf = 1
        let sent = try ask(ControlRequest(command: "send", request: edited), data: data)
        XCTAssertEqual(sent.status, 200, String(describing: sent.error))
        XCTAssertEqual(sent.lines.first?.hasPrefix("#1 ↻ PUT \(origin.url("/echo")) → 200 OK"), true, sent.lines.joined())
        XCTAssertEqual(origin.log.requests.last?.headers.first(named: "x-edited"), "yes")
    }

    func testAForgottenHoldGoesOnAfterTheTimeoutAndBadFlagsAreRefused() async throws {
        let executable = try proxyAppExecutable()
        let scratch = try makeTemporaryDirectory("breakpoints-timeout").url
        let origin = try await TestOrigin.start()
        defer { Task { await origin.shutdown() } }
        let data = scratch.appendingPathComponent("data")
        let proxy = try await ProxyAppProcess.startHeadless(executable: executable, dataDirectory: data,
                                                           arguments: ["--intercept", "~s", "--intercept-timeout", "1s"])
        addTeardownBlock { proxy.killHard() }
        let fetched = try await Curl.fetch(viaProxy: proxy.port, origin.url("/status/201"))
        XCTAssertEqual(fetched.status, 201, "released unchanged once nobody decided")

        let bad = try await ChildProcess.run(executable, ["run", "--intercept", "~c 99999", "--data-dir", data.path], timeout: 20)
        XCTAssertEqual(bad.exitCode, 64)
        XCTAssertTrue(String(decoding: bad.stderr, as: UTF8.self).contains("bad --intercept expression"),
                      String(decoding: bad.stderr, as: UTF8.self))

        // A body term could never match at a breakpoint (holds are decided on heads): refused in
        // words, on the command line and through the control channel alike.
        let onBody = try await ChildProcess.run(executable, ["run", "--intercept", "~u /api & !~bq secret", "--data-dir", data.path],
                                                timeout: 20)
        XCTAssertEqual(onBody.exitCode, 64)
        XCTAssertTrue(String(decoding: onBody.stderr, as: UTF8.self).contains("--intercept: bad intercept expression: a breakpoint is "
                                                                             + "decided before bodies arrive"),
                      String(decoding: onBody.stderr, as: UTF8.self))
        let refused = try ask(ControlRequest(command: "intercept", filter: "~bs error"), data: data)
        XCTAssertFalse(refused.ok)
        XCTAssertEqual(refused.error?.hasPrefix("bad intercept expression: a breakpoint is decided before bodies arrive, so ~b, ~bq and ~bs"),
                       true, String(describing: refused.error))
        XCTAssertEqual(try ask(ControlRequest(command: "holds"), data: data).filter, "~s", "the filter in force is kept")
    }
}
