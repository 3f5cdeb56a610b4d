import CaptureStore
import FlowExport
import Foundation
import ProxyModel
import TerminalUI
import XCTest

@testable import ProxyAppUI

/// `y` then u, c, b or r: what reaches the terminal is one OSC 52 sequence whose payload decodes
/// to exactly what the exporters produce; refusals and the size bound are said, never sent.
final class ClipboardTests: TUIControllerTestCase {
    private static let api = Flow(
        method: "POST", host: "api.test", path: "/items?q=1",
        requestHeaders: [HeaderField(name: "Host", value: "api.test"), HeaderField(name: "X-Test", value: "it's")],
        requestBody: CapturedBody(bytes: Data("a=1".utf8), size: 3), status: 201,
        responseHeaders: [HeaderField(name: "Content-Type", value: "application/json")],
        responseBody: CapturedBody(bytes: Data(#"{"id":7}"#.utf8), size: 8))

    /// The text inside the one OSC 52 sequence of `output`; fails when there is anything else.
    private func clipboard(_ output: [UInt8], file: StaticString = #filePath, line: UInt = #line) -> String? {
        let prefix = Array("\u{1B}]52;c;".utf8)
        guard output.starts(with: prefix), output.last == 0x07 else {
            XCTFail("not one OSC 52 sequence: \(output.prefix(40))", file: file, line: line)
            return nil
        }
        let payload = output.dropFirst(prefix.count).dropLast()
        XCTAssertTrue(payload.allSatisfy { (0x21...0x7E).contains($0) }, "no raw control byte", file: file, line: line)
        return Data(base64Encoded: Data(payload)).flatMap { String(data: $0, encoding: .utf8) }
    }

    /// Presses `y` and `key` on the selected flow; returns the status line once the copy ran.
    private func copy(_ key: Character, _ controller: TUIController) -> String {
        controller.handle(.character("y"))
        XCTAssertTrue(controller.render().text.contains("u URL  c curl  b response body  r raw request"))
        controller.handle(.character(key))
        let screen = settle(controller) { _, screen in screen.contains("copied") || screen.contains("not copied")
            || screen.contains("no ") || screen.contains("tunnel") || screen.contains("too big") }
        return screen.split(separator: "\n").last.map(String.init) ?? ""
    }

    func testEachCopyIsWhatTheExportersProduce() throws {
        for size in [ScreenSize(width: 80, height: 24), ScreenSize(width: 200, height: 50)] {
            let (controller, repository) = try makeController([Self.api], size: size, name: "\(size.width).sqlite")
            settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 1 }
            let flow = try XCTUnwrap(try repository.flow(id: 1))

            XCTAssertTrue(copy("u", controller).contains("copied the URL of flow #1 to the clipboard"))
            XCTAssertEqual(clipboard(controller.takeTerminalOutput()), "http://api.test/items?q=1")
            XCTAssertEqual(controller.takeTerminalOutput(), [], "sent once")

            XCTAssertTrue(copy("c", controller).contains("copied the curl command of flow #1"))
            XCTAssertEqual(clipboard(controller.takeTerminalOutput()), CurlCommand.render(flow))

            XCTAssertTrue(copy("b", controller).contains("copied the response body of flow #1"))
            XCTAssertEqual(clipboard(controller.takeTerminalOutput()), #"{"id":7}"#)

            XCTAssertTrue(copy("r", controller).contains("copied the raw request of flow #1"))
            let raw = try XCTUnwrap(clipboard(controller.takeTerminalOutput()))
            XCTAssertEqual(raw, String(decoding: RawExchange.request(flow), as: UTF8.self))
            XCTAssertTrue(raw.hasPrefix("POST /items?q=1 HTTP/1.1\r\nHost: api.test\r\n"), raw)
            XCTAssertTrue(raw.hasSuffix("\r\n\r\na=1"), raw)

            // In the detail view too.
            controller.handle(.enter)
            settle(controller) { _, screen in !screen.contains("loading…") }
            XCTAssertTrue(copy("u", controller).contains("copied the URL"))
            XCTAssertEqual(clipboard(controller.takeTerminalOutput()), "http://api.test/items?q=1")
        }
    }

    func testCancelUnknownAndRefusedCopiesSendNothing() throws {
        var binary = Flow(host: "img.test", path: "/a.png", status: 200,
                          responseHeaders: [HeaderField(name: "Content-Type", value: "image/png")],
                          responseBody: CapturedBody(bytes: Data([0x89, 0x50, 0x4E, 0x47, 0x00, 0xFF]), size: 6))
        binary.requestHeaders = [HeaderField(name: "Host", value: "img.test")]
        let hostile = Flow(host: "evil.test", path: "/", status: 200,
                           responseBody: CapturedBody(bytes: Data("hi\u{1B}]52;c;ZXZpbA==\u{07}\u{1B}[2J".utf8), size: 20))
        let tunnel = Flow(kind: .tunnel, method: "CONNECT", host: "t.test", port: 443)
        let big = Flow(host: "big.test", path: "/", status: 200,
                       responseBody: CapturedBody(bytes: Data(repeating: 0x61, count: ClipboardSequence.limit + 1),
                                                  size: Int64(ClipboardSequence.limit + 1)))
        let (controller, _) = try makeController([binary, hostile, tunnel, big, Flow(host: "empty.test", path: "/", status: 204)],
                                                 size: ScreenSize(width: 200, height: 50))
        settle(controller) { controller, _ in controller.isListSettled && controller.listProgress.rows == 5 }

        controller.handle(.home)
        controller.handle(.character("y"))
        controller.handle(.escape)
        XCTAssertTrue(controller.render().text.contains("cancelled"))
        controller.handle(.character("y"))
        controller.handle(.character("x"))
        XCTAssertTrue(controller.render().text.contains("y x: no such copy key — u URL  c curl"), controller.render().text)
        XCTAssertTrue(copy("b", controller).contains("the response body of flow #1 is binary (not UTF-8 text): not copied"))
        controller.handle(.character("j"))
        XCTAssertTrue(copy("b", controller).contains("the response body of flow #2 holds control characters: not copied"))
        controller.handle(.character("j"))
        XCTAssertTrue(copy("c", controller).contains("flow #3 is a CONNECT tunnel"))
        XCTAssertTrue(copy("r", controller).contains("flow #3 is a CONNECT tunnel"))
        controller.handle(.character("j"))
        XCTAssertTrue(copy("b", controller).contains("the response body of flow #4 is 65,537 bytes: too big for the clipboard (at most 64 KiB)"))
        controller.handle(.character("j"))
        XCTAssertTrue(copy("b", controller).contains("flow #5 has no response body to copy"))
        XCTAssertEqual(controller.takeTerminalOutput(), [], "nothing was sent to the terminal")
    }

    func testCopyOnAnEmptyViewSaysSo() throws {
        let (controller, _) = try makeController([])
        settle(controller) { controller, _ in controller.isListSettled && !controller.listProgress.scanning }
        controller.handle(.character("y"))
        XCTAssertTrue(controller.render().text.contains("nothing to copy: the view is empty"))
        controller.handle(.character("u"))  // no menu is open: u is just an unknown key
        XCTAssertTrue(controller.render().text.contains("u: no such key"))
        XCTAssertEqual(controller.takeTerminalOutput(), [])
    }

    /// A body cut at the capture limit is copied as captured, and the status line says so.
    func testATruncatedBodySaysSo() {
        let flow = Flow(id: 3, host: "a.test", status: 200, responseBody: CapturedBody(bytes: Data("abc".utf8), size: 10, truncated: true))
        guard case .success(let copy) = ClipboardText.make(.responseBody, of: flow) else { return XCTFail("refused") }
        XCTAssertEqual(copy.bytes, Array("abc".utf8))
        XCTAssertEqual(copy.what, "the response body of flow #3 (truncated when captured)")
    }

    /// A CR only as part of CRLF; every other control character is refused.
    func testPasteProblems() {
        XCTAssertNil(ClipboardText.pasteProblem(Array("a\tb\r\nc\n".utf8)))
        XCTAssertNotNil(ClipboardText.pasteProblem(Array("a\rb".utf8)))
        XCTAssertNotNil(ClipboardText.pasteProblem(Array("a\r".utf8)))
        XCTAssertNotNil(ClipboardText.pasteProblem(Array("\u{9B}2J".utf8)), "a C1 CSI")
        XCTAssertNotNil(ClipboardText.pasteProblem(Array("txt\u{202E}exe".utf8)), "a bidi override")
        XCTAssertNotNil(ClipboardText.pasteProblem([0xC3]))
        XCTAssertNil(ClipboardText.pasteProblem(Array("é 日本".utf8)))
    }
}
