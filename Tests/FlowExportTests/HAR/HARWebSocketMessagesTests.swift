import FlowExport
import Foundation
import HARValidation
import ProxyModel
import XCTest

/// `_webSocketMessages`: a WebSocket flow's messages are written as Chrome writes them (`type`,
/// `time` in seconds, `opcode`, `data`; binary in base64), our import reads them back exactly
/// (close codes, sizes of payloads not kept, compression), and Chrome's own form imports too.
final class HARWebSocketMessagesTests: XCTestCase {
    static let start = Date(timeIntervalSince1970: 1_795_338_303.5)

    static var webSocket: Flow {
        var flow = SampleFlows.plain
        flow.status = 101
        flow.reason = "Switching Protocols"
        flow.webSocketMessages = [
            CapturedMessage(direction: .sent, time: start, kind: .text, payload: Data("hello \"there\"".utf8)),
            CapturedMessage(direction: .received, time: start.addingTimeInterval(0.25), kind: .binary, payload: Data([0, 1, 0xFF]),
                            compressed: true),
            CapturedMessage(direction: .received, time: start.addingTimeInterval(0.5), kind: .text, payload: Data("big".utf8),
                            size: 2_000_000, truncated: true),
            CapturedMessage(direction: .sent, time: start.addingTimeInterval(0.75), kind: .ping, payload: Data("p".utf8)),
            CapturedMessage(direction: .sent, time: start.addingTimeInterval(1), kind: .close, payload: Data(), size: 6,
                            closeCode: 1000, closeReason: "done"),
        ]
        flow.messageCount = 5
        return flow
    }

    func testWrittenAsChromeDoes() throws {
        let data = try exportHAR([Self.webSocket, SampleFlows.plain])
        XCTAssertEqual(HARValidator.problems(in: data), [])
        let entries = try harEntries(data)
        let messages = try XCTUnwrap(entries[0]["_webSocketMessages"] as? [[String: Any]])
        XCTAssertEqual(messages.map { $0["type"] as? String }, ["send", "receive", "receive", "send", "send"])
        XCTAssertEqual(messages.map { $0["opcode"] as? Int }, [1, 2, 1, 9, 8])
        XCTAssertEqual(messages[0]["data"] as? String, "hello \"there\"")
        XCTAssertEqual(messages[0]["time"] as? Double, 1_795_338_303.5)
        XCTAssertEqual(messages[1]["data"] as? String, "AAH/")
        XCTAssertEqual(messages[2]["_size"] as? Int, 2_000_000)
        XCTAssertEqual(messages[4]["_closeCode"] as? Int, 1000)
        XCTAssertEqual(messages[4]["data"] as? String, "done")
        XCTAssertNil(entries[1]["_webSocketMessages"])
    }

    func testRoundTripThroughImport() throws {
        let imported = try HARReader.flows(from: try exportHAR([Self.webSocket]))
        XCTAssertEqual(imported.first?.webSocketMessages, Self.webSocket.webSocketMessages)
        XCTAssertEqual(imported.first?.messageCount, 5)
    }

    /// Chrome's export: binary data in base64 without a marker, no extras.
    func testChromesFormImports() throws {
        let har = """
            {"log":{"version":"1.2","creator":{"name":"WebInspector","version":"537.36"},"entries":[{
              "startedDateTime":"2026-11-22T09:05:03.500Z","time":12,
              "request":{"method":"GET","url":"wss://echo.test/socket","httpVersion":"HTTP/1.1","headers":[],"queryString":[],"cookies":[],"headersSize":-1,"bodySize":0},
              "response":{"status":101,"statusText":"Switching Protocols","httpVersion":"HTTP/1.1","headers":[],"cookies":[],"content":{"size":0,"mimeType":"x-unknown"},"redirectURL":"","headersSize":-1,"bodySize":0},
              "cache":{},"timings":{"send":0,"wait":12,"receive":0},
              "_resourceType":"websocket",
              "_webSocketMessages":[
                {"type":"send","time":1795338303.6,"opcode":1,"data":"ping me"},
                {"type":"receive","time":1795338303.7,"opcode":2,"data":"AAEC"}
              ]}]}}
            """
        let flow = try XCTUnwrap(HARReader.flows(from: Data(har.utf8)).first)
        XCTAssertEqual(flow.webSocketMessages?.map(\.kind), [.text, .binary])
        XCTAssertEqual(flow.webSocketMessages?.last?.payload, Data([0, 1, 2]))
        XCTAssertEqual(flow.webSocketMessages?.first?.payload, Data("ping me".utf8))
        XCTAssertEqual(flow.webSocketMessages?.first?.direction, .sent)
    }

    func testABadMessageIsNamed() {
        let har = """
            {"log":{"version":"1.2","creator":{"name":"x","version":"1"},"entries":[{
              "startedDateTime":"2026-11-22T09:05:03.500Z","time":1,
              "request":{"method":"GET","url":"ws://a.test/","httpVersion":"HTTP/1.1","headers":[]},
              "response":{"status":101,"statusText":"","httpVersion":"HTTP/1.1","headers":[],"content":{"size":0}},
              "timings":{"send":0,"wait":1,"receive":0},
              "_webSocketMessages":[{"type":"sideways","time":1,"opcode":1,"data":"x"}]}]}}
            """
        XCTAssertThrowsError(try HARReader.flows(from: Data(har.utf8))) { error in
            XCTAssertTrue("\(error)".contains("_webSocketMessages[0].type"), "\(error)")
        }
    }
}
