import Foundation
import NIOConcurrencyHelpers
import ProxyModel
import RequestComposer
import TerminalUI
import XCTest

@testable import ProxyAppUI

/// Breakpoints in the TUI against a fake proxy: `b` sets the filter (a bad one keeps the prompt
/// with its column), held exchanges show above the flows with a count in the header, Tab picks
/// one, `a` accepts it, `x` kills it, `A` accepts all; without a proxy each key says so.
final class TUIControllerBreakpointTests: TUIControllerTestCase {
    /// A proxy's breakpoints in memory: what the TUI asked is recorded, holds are added by the test.
    private final class FakeBreakpoints: Sendable {
        let state = NIOLockedValueBox(TUIBreakpoints.State())
        let decisions = NIOLockedValueBox<[String]>([])
        let edits = NIOLockedValueBox<[TUIComposedRequest]>([])
        let responseEdits = NIOLockedValueBox<[ComposedResponse]>([])

        func hold(_ id: Int, _ side: String, _ url: String) {
            state.withLockedValue {
                $0.held.append(TUIBreakpoints.Held(id: id, side: side, method: "GET", url: url, status: side == "response" ? 200 : nil,
                                                   seconds: 3))
            }
        }

        var forTUI: TUIBreakpoints {
            TUIBreakpoints(
                state: { self.state.withLockedValue { $0 } },
                setFilter: { text in
                    self.state.withLockedValue { $0.filter = text }
                    return nil
                },
                decide: { id, accept in
                    self.decisions.withLockedValue { $0.append("\(accept ? "accept" : "kill") \(id)") }
                    return self.state.withLockedValue { state in
                        guard let index = state.held.firstIndex(where: { $0.id == id }) else { return false }
                        state.held.remove(at: index)
                        return true
                    }
                },
                acceptAll: {
                    self.state.withLockedValue { state in
                        defer { state.held = [] }
                        return state.held.count
                    }
                },
                heldRequest: { id in
                    guard let held = self.state.withLockedValue({ $0.held.first { $0.id == id } }), held.side == "request" else { return nil }
                    return TUIComposedRequest(method: held.method, url: held.url, headers: [HeaderField(name: "Accept", value: "*/*")],
                                              body: [], replayOf: nil)
                },
                edit: { id, request in
                    self.edits.withLockedValue { $0.append(request) }
                    return self.release(id) ? nil : "no longer held"
                },
                heldResponse: { id in
                    guard let held = self.state.withLockedValue({ $0.held.first { $0.id == id } }), held.side == "response" else { return nil }
                    return ComposedResponse(status: 200, reason: "OK", headers: [HeaderField(name: "Content-Type", value: "text/plain")],
                                            body: Array("from the origin".utf8))
                },
                editResponse: { id, response in
                    self.responseEdits.withLockedValue { $0.append(response) }
                    return response.status == 599 ? "the proxy refused it" : self.release(id) ? nil : "no longer held"
                })
        }

        private func release(_ id: Int) -> Bool {
            state.withLockedValue { state in
                guard let index = state.held.firstIndex(where: { $0.id == id }) else { return false }
                state.held.remove(at: index)
                return true
            }
        }
    }

    func testHeldExchangesAreListedPickedAndDecided() throws {
        let fake = FakeBreakpoints()
        let context = TUIContext(outputDirectory: directory.path, version: "test", breakpoints: fake.forTUI)
        let (controller, _) = try makeController(context: context, size: ScreenSize(width: 80, height: 24))
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }

        controller.handle(.character("b"))
        type("~q & (", into: controller)
        controller.handle(.enter)
        XCTAssertTrue(controller.render().text.contains("at column 7"), "a bad filter keeps the prompt with its column")
        controller.handle(.control("u"))
        type("~q & ~d api", into: controller)
        controller.handle(.enter)
        var screen = settle(controller) { _, screen in screen.contains("intercept: ~q & ~d api") }
        XCTAssertEqual(fake.state.withLockedValue { $0.filter }, "~q & ~d api")

        fake.hold(7, "request", "https://api.test/login")
        fake.hold(8, "response", "https://api.test/me")
        screen = settle(controller) { _, screen in screen.contains("HELD: 2") }
        let lines = screen.split(separator: "\n").map(String.init)
        XCTAssertTrue(lines[1].hasPrefix("▶ ⏸ #7 request   GET https://api.test/login  3s"), lines[1])
        XCTAssertTrue(lines[2].hasPrefix("  ⏸ #8 response 200  GET https://api.test/me  3s"), lines[2])
        XCTAssertTrue(lines[3].contains("METHOD"), "the flow list follows the held exchanges: \(lines[3])")
        let cells = controller.render()
        XCTAssertEqual(cells[1, 4].style.background, TerminalColor.yellow)

        controller.handle(.tab)
        controller.handle(.character("x"))
        screen = settle(controller) { _, screen in screen.contains("killed #8") }
        controller.handle(.character("a"))
        screen = settle(controller) { _, screen in screen.contains("accepted #7") }
        XCTAssertEqual(fake.decisions.withLockedValue { $0 }, ["kill 8", "accept 7"])
        screen = settle(controller) { _, screen in !screen.contains("HELD") }
        XCTAssertTrue(screen.split(separator: "\n")[1].contains("METHOD"), "the list moves back up")

        fake.hold(9, "request", "https://api.test/a")
        fake.hold(10, "request", "https://api.test/b")
        settle(controller) { _, screen in screen.contains("HELD: 2") }
        controller.handle(.character("A"))
        settle(controller) { _, screen in screen.contains("accepted 2 held exchanges") }

        controller.handle(.character("b"))
        controller.handle(.control("u"))
        controller.handle(.enter)
        settle(controller) { _, screen in screen.contains("breakpoints off") }
        XCTAssertNil(fake.state.withLockedValue { $0.filter })
    }

    /// `R` while requests are held edits the selected one; it goes on as saved.
    func testRWhileHeldEditsTheHeldRequest() throws {
        let (fake, controller) = try controllerHolding(7, "request", "https://api.test/login")
        controller.handle(.character("R"))
        let held = try XCTUnwrap(pendingEdit(controller))
        XCTAssertTrue(held.contains("# edit held request #7"), held)
        XCTAssertTrue(held.contains("GET https://api.test/login HTTP/1.1"), held)
        controller.editorFinished(.success(held.replacingOccurrences(of: "GET https://api.test/login", with: "POST /login?x=1")))
        settle(controller) { _, screen in screen.contains("edited #7: it goes on as saved") }
        let edit = try XCTUnwrap(fake.edits.withLockedValue { $0.first })
        XCTAssertEqual(edit.method, "POST")
        XCTAssertEqual(edit.url, "https://api.test/login?x=1")
    }

    /// `R` on a held response opens it as a status line, headers and body; a status that cannot
    /// end an exchange reopens the editor with the reason; what is saved goes to the client.
    func testRWhileHeldEditsTheHeldResponse() throws {
        let (fake, controller) = try controllerHolding(8, "response", "https://api.test/me")
        controller.handle(.character("R"))
        let held = try XCTUnwrap(pendingEdit(controller))
        XCTAssertTrue(held.contains("# edit held response #8 (GET https://api.test/me)"), held)
        XCTAssertTrue(held.contains("HTTP/1.1 200 OK\nContent-Type: text/plain\n\nfrom the origin\n"), held)

        controller.editorFinished(.success(held.replacingOccurrences(of: "HTTP/1.1 200 OK", with: "HTTP/1.1 101 Switching")))
        let again = try XCTUnwrap(controller.takePendingEdit())
        XCTAssertTrue(again.hasPrefix("# error: line 2: the status 101 is not a final one"), again)
        XCTAssertTrue(fake.responseEdits.withLockedValue { $0.isEmpty }, "nothing went on")

        controller.editorFinished(.success(again.replacingOccurrences(of: "HTTP/1.1 101 Switching", with: "HTTP/1.1 599 Refused")))
        settle(controller) { _, screen in screen.contains("#8 was not changed: the proxy refused it") }

        controller.handle(.character("R"))  // refused by the proxy, still held: R opens it again
        let reopened = try XCTUnwrap(pendingEdit(controller))
        XCTAssertFalse(reopened.contains("# error:"), reopened)
        let saved = reopened.replacingOccurrences(of: "HTTP/1.1 200 OK", with: "HTTP/1.1 418 Teapot")
            .replacingOccurrences(of: "from the origin", with: "short and stout")
        controller.editorFinished(.success(saved))
        settle(controller) { _, screen in screen.contains("edited #8: the client gets it as saved") }
        let edit = try XCTUnwrap(fake.responseEdits.withLockedValue { $0.last })
        XCTAssertEqual(edit.status, 418)
        XCTAssertEqual(edit.reason, "Teapot")
        XCTAssertEqual(edit.body, Array("short and stout".utf8))
        XCTAssertEqual(edit.headers, [HeaderField(name: "Content-Type", value: "text/plain")])
    }

    /// A controller over a fake proxy holding one exchange, the held list showing it.
    private func controllerHolding(_ id: Int, _ side: String, _ url: String) throws -> (FakeBreakpoints, TUIController) {
        let fake = FakeBreakpoints()
        let context = TUIContext(outputDirectory: directory.path, version: "test", breakpoints: fake.forTUI)
        let (controller, _) = try makeController(context: context)
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        fake.hold(id, side, url)
        settle(controller) { _, screen in screen.contains("HELD: 1") }
        return (fake, controller)
    }

    private func pendingEdit(_ controller: TUIController) -> String? {
        var text: String?
        for _ in 0..<500 where text == nil {
            controller.worker.waitUntilIdle()
            controller.tick()
            text = controller.takePendingEdit()
        }
        return text
    }

    func testWithoutAProxyBreakpointKeysSaySo() throws {
        let (controller, _) = try makeController()
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        controller.handle(.character("b"))
        XCTAssertTrue(controller.render().text.contains("breakpoints need a running proxy"))
        for key in [Key.character("a"), .character("x"), .tab, .character("A")] {
            controller.handle(key)
            XCTAssertTrue(controller.render().text.contains("nothing is held at a breakpoint"), "\(key)")
        }
    }
}
