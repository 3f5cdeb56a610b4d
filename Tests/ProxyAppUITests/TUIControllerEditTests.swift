import Foundation
import NIOConcurrencyHelpers
import ProxyModel
import TerminalUI
import XCTest

@testable import ProxyAppUI

/// `R`: the flow's request opens in the editor as text (the runner lends the terminal), what is
/// saved is sent as a new request linked to the flow; a request that does not parse goes back to
/// the editor with the error on top; an emptied file or a failing editor sends nothing.
final class TUIControllerEditTests: TUIControllerTestCase {
    private func makeEditingController(sent: NIOLockedValueBox<[TUIComposedRequest]>) throws -> TUIController {
        let context = TUIContext(outputDirectory: directory.path, version: "test", send: { request in
            sent.withLockedValue { $0.append(request) }
            return TUIActionResult(ok: true, message: "#\(request.replayOf ?? 0) ↻ \(request.method) \(request.url) → 200 OK")
        })
        let flows = [Flow(method: "POST", scheme: "https", host: "api.test", port: 443, path: "/items?x=1",
                          requestHeaders: [HeaderField(name: "Host", value: "api.test"), HeaderField(name: "Content-Type", value: "application/json")],
                          requestBody: CapturedBody(bytes: Data(#"{"a":1}"#.utf8), size: 7), status: 201)]
        let (controller, _) = try makeController(flows, context: context)
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 1 }
        return controller
    }

    /// Waits for the worker to hand the runner an edit.
    private func pendingText(_ controller: TUIController) -> String? {
        for _ in 0..<500 {
            controller.worker.waitUntilIdle()
            controller.tick()
            if let text = controller.takePendingEdit() { return text }
            Thread.sleep(forTimeInterval: 0.005)
        }
        return nil
    }

    func testTheEditedRequestIsSentLinkedToItsFlow() throws {
        let sent = NIOLockedValueBox<[TUIComposedRequest]>([])
        let controller = try makeEditingController(sent: sent)
        controller.handle(.character("R"))
        let text = try XCTUnwrap(pendingText(controller))
        XCTAssertTrue(text.hasPrefix("# \(TUIController.editHelp)\nPOST https://api.test/items?x=1 HTTP/1.1\n"), text)
        XCTAssertTrue(text.hasSuffix("\n\n{\"a\":1}\n"), text)

        let edited = text.replacingOccurrences(of: #"{"a":1}"#, with: #"{"a":2,"b":true}"#)
            .replacingOccurrences(of: "POST https://api.test/items?x=1", with: "PUT /items/7")
        controller.editorFinished(.success(edited))
        settle(controller) { _, screen in screen.contains("#1 ↻ PUT https://api.test/items/7 → 200 OK") }
        let request = try XCTUnwrap(sent.withLockedValue { $0.first })
        XCTAssertEqual(request.method, "PUT")
        XCTAssertEqual(request.url, "https://api.test/items/7", "a path alone goes to the flow's origin")
        XCTAssertEqual(request.body, Array(#"{"a":2,"b":true}"#.utf8))
        XCTAssertEqual(request.replayOf, 1)
        XCTAssertNil(controller.takePendingEdit())
    }

    func testABadRequestReopensTheEditorWithTheReason() throws {
        let sent = NIOLockedValueBox<[TUIComposedRequest]>([])
        let controller = try makeEditingController(sent: sent)
        controller.handle(.character("R"))
        let text = try XCTUnwrap(pendingText(controller))
        let broken = text.replacingOccurrences(of: "Content-Type: application/json", with: "Bad Header: x")
        controller.editorFinished(.success(broken))
        let again = try XCTUnwrap(controller.takePendingEdit(), "the editor opens again")
        XCTAssertTrue(again.hasPrefix("# error: line "), again)
        XCTAssertTrue(again.contains("Bad Header: x"), "the person's text is kept")
        controller.editorFinished(.success(again.replacingOccurrences(of: "Bad Header: x", with: "X-Fixed: 1")))
        settle(controller) { _, screen in screen.contains("→ 200 OK") }
        XCTAssertEqual(sent.withLockedValue { $0.first?.headers.first(named: "x-fixed") }, "1")
    }

    func testAnEmptiedFileOrAFailingEditorSendsNothing() throws {
        let sent = NIOLockedValueBox<[TUIComposedRequest]>([])
        let controller = try makeEditingController(sent: sent)
        controller.handle(.character("R"))
        _ = try XCTUnwrap(pendingText(controller))
        controller.editorFinished(.success("# only comments\n\n"))
        XCTAssertTrue(controller.render().text.contains("edit cancelled: nothing was sent"))
        controller.handle(.character("R"))
        _ = try XCTUnwrap(pendingText(controller))
        controller.editorFinished(.failure(ExternalEditor.Failure(description: "the editor 'nano' exited with status 1: nothing was sent")))
        XCTAssertTrue(controller.render().text.contains("exited with status 1"))
        controller.worker.waitUntilIdle()
        XCTAssertEqual(sent.withLockedValue { $0.count }, 0)
    }

    func testWithoutAProxyEditingSaysSo() throws {
        let (controller, _) = try makeController()
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 10 }
        controller.handle(.character("R"))
        XCTAssertTrue(controller.render().text.contains("no proxy to send through"))
    }

    /// The real editor path: `$VISUAL` (a script here) edits the file in place; a failing one is said.
    func testTheEditorRunsOnAPrivateFileAndItsExitIsChecked() throws {
        let script = directory.appendingPathComponent("editor.sh").path
        let mode = directory.appendingPathComponent("mode").path
        try "#!/bin/sh\nstat -c %a \"$1\" > '\(mode)'; sed -i 's/GET/DELETE/' \"$1\"\n".write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let result = ExternalEditor.edit("GET http://a.test/\n\n", environment: ["VISUAL": script, "PATH": "/usr/bin:/bin"])
        XCTAssertEqual(try result.get(), "DELETE http://a.test/\n\n")
        XCTAssertEqual(try String(contentsOfFile: mode, encoding: .utf8), "600\n", "the file to edit is private")
        XCTAssertEqual(ExternalEditor.command(environment: ["EDITOR": "nano -w"]), "nano -w")
        XCTAssertEqual(ExternalEditor.command(environment: ["VISUAL": " ", "EDITOR": "ed"]), "ed")
        XCTAssertEqual(ExternalEditor.command(environment: [:]), "vi")
        let failing = ExternalEditor.edit("GET http://a.test/\n", environment: ["VISUAL": "false", "PATH": "/usr/bin:/bin"])
        guard case .failure(let failure) = failing else { return XCTFail("a failing editor sends nothing") }
        XCTAssertTrue(failure.description.hasPrefix("the editor 'false' exited with status 1"), failure.description)
    }
}
