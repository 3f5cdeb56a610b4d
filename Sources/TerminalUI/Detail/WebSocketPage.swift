import Foundation
import ProxyModel

/// The WebSocket tab: every message of the connection, oldest first, each as a heading line
/// (direction arrow, time, kind, size, and what was not kept) and its payload: text as text (JSON
/// pretty-printed), binary as hex, a close as its code and reason.
///
/// `→` is the client sending, `←` the server. A payload shows at most `maxPayloadLines` lines so one
/// large message does not bury the others; the heading says how much more there is.
enum WebSocketPage {
    static let maxPayloadLines = 20
    static let sentStyle = CellStyle(foreground: .cyan, bold: true)
    static let receivedStyle = CellStyle(foreground: .green, bold: true)

    static func lines(_ messages: [CapturedMessage]?, flow: Flow, timeZone: TimeZone) -> [DetailLine] {
        guard let messages else { return [DetailLine("loading messages…", MessagePage.dimStyle)] }
        var lines: [DetailLine] = [summary(messages, flow: flow), .blank]
        if messages.isEmpty {
            lines.append(DetailLine("No messages yet.", MessagePage.dimStyle))
            return lines
        }
        for message in messages {
            lines.append(heading(message, timeZone: timeZone))
            lines += payload(message)
        }
        if flow.messageCount > messages.count {
            lines.append(DetailLine("… \(NumberText.grouped(flow.messageCount - messages.count)) more messages not loaded",
                                    MessagePage.dimStyle))
        }
        return lines
    }

    /// `12 messages · → 5 (1.2 KiB) · ← 7 (3.4 KiB)`.
    private static func summary(_ messages: [CapturedMessage], flow: Flow) -> DetailLine {
        let sent = messages.filter { $0.direction == .sent }
        let received = messages.filter { $0.direction == .received }
        func bytes(_ list: [CapturedMessage]) -> String { FlowRow.humanSize(list.reduce(0) { $0 + $1.size }) }
        let count = max(flow.messageCount, messages.count)
        return DetailLine("\(NumberText.grouped(count)) message\(count == 1 ? "" : "s") · → \(sent.count) (\(bytes(sent)))"
                          + " · ← \(received.count) (\(bytes(received)))", CellStyle(bold: true))
    }

    private static func heading(_ message: CapturedMessage, timeZone: TimeZone) -> DetailLine {
        let arrow = message.direction == .sent ? "→" : "←"
        var text = " \(FlowRow.clockTime(message.time, timeZone: timeZone))  \(message.kind.rawValue)  \(FlowRow.humanSize(message.size))"
        if message.compressed { text += "  (compressed)" }
        if message.truncated { text += "  (payload not kept whole: over the capture limit)" }
        return DetailLine([.init(text: arrow, style: message.direction == .sent ? sentStyle : receivedStyle),
                           .init(text: text, style: CellStyle(bold: true))])
    }

    private static func payload(_ message: CapturedMessage) -> [DetailLine] {
        var lines: [String]
        switch message.kind {
        case .close:
            let code = message.closeCode.map { "code \($0)" } ?? "no code"
            lines = [message.closeReason.map { $0.isEmpty ? code : "\(code): \($0)" } ?? code]
        case .text:
            let bytes = [UInt8](message.payload)
            let pretty = String(decoding: JSONReindenter.reindent(bytes) ?? bytes, as: UTF8.self)
            lines = pretty.split(separator: "\n", omittingEmptySubsequences: false).map { TextLineIndex.expandingTabs(String($0)) }
        case .binary, .ping, .pong:
            if message.payload.isEmpty {
                lines = message.size == 0 ? [] : ["(payload not kept)"]
            } else {
                let hex = HexLines(bytes: [UInt8](message.payload))
                lines = (0..<hex.count).map { hex.line($0) }
            }
        }
        var shown = lines.prefix(maxPayloadLines).map { DetailLine("   " + $0) }
        if lines.count > maxPayloadLines {
            shown.append(DetailLine("   … \(lines.count - maxPayloadLines) more lines", MessagePage.dimStyle))
        }
        return shown
    }
}
