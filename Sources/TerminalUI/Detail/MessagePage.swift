import ProxyModel

/// The Request and Response tabs: the start line, the headers, a rule naming the body, and the
/// body in its view mode.
struct MessagePage {
    private(set) var head: [DetailLine] = []
    private(set) var body = BodyLines.empty
    /// The body's view mode; nil while the body is loading or when there is no message.
    private(set) var mode: BodyViewMode?

    static let nameStyle = CellStyle(foreground: .cyan, bold: true)
    static let ruleStyle = CellStyle(foreground: .blue)
    static let dimStyle = CellStyle(dim: true)

    /// `chosen` is the mode the user picked for this tab, if any; a mode the body does not offer
    /// gives way to the detected one.
    init(flow: Flow, tab: DetailTab, document: BodyDocument?, mode chosen: BodyViewMode?) {
        if tab == .request {
            let target = flow.kind == .tunnel ? "\(flow.urlHost):\(flow.port)" : flow.path
            head.append(DetailLine("\(flow.method) \(target) \(flow.httpVersion)", CellStyle(bold: true)))
            addMessage(headers: flow.requestHeaders, document: document, chosen: chosen)
        } else if let status = flow.status {
            var style = CellStyle(bold: true)
            style.foreground = FlowListRenderer.statusColor(status)
            let reason = flow.reason.map { " \($0)" } ?? ""
            head.append(DetailLine("\(flow.httpVersion) \(status)\(reason)", style))
            if let error = flow.error {  // the response arrived, then something failed (its body, say)
                head.append(DetailLine("Error: \(error)", CellStyle(foreground: .red, bold: true)))
            }
            addMessage(headers: flow.responseHeaders, trailers: flow.responseTrailers, document: document, chosen: chosen)
        } else if let error = flow.error {
            head.append(DetailLine("No response: \(error)", CellStyle(foreground: .red, bold: true)))
            if let note = flow.note {  // what to do about it ("install the CA from …", "to undo: …")
                head.append(DetailLine("Note: \(note)", CellStyle(foreground: .yellow)))
            }
        } else if flow.kind == .tunnel {
            head.append(DetailLine("No HTTP response: the tunnel relayed opaque bytes (see Timing/TLS).", Self.dimStyle))
        } else {
            head.append(DetailLine("no response yet", Self.dimStyle))
        }
    }

    /// `trailers` (sent after the body, as gRPC's status) are listed under the headers, so they
    /// are seen without scrolling through the body.
    private mutating func addMessage(headers: [HeaderField], trailers: [HeaderField] = [], document: BodyDocument?,
                                     chosen: BodyViewMode?) {
        for header in headers {
            head.append(DetailLine([.init(text: header.name, style: Self.nameStyle),
                                    .init(text: ": " + header.value, style: .plain)]))
        }
        head.append(.blank)
        if !trailers.isEmpty {
            head.append(Self.rule("trailers (sent after the body)"))
            for trailer in trailers {
                head.append(DetailLine([.init(text: trailer.name, style: Self.nameStyle),
                                        .init(text: ": " + trailer.value, style: .plain)]))
            }
            head.append(.blank)
        }
        guard let document else {
            head.append(Self.rule("body"))
            head.append(DetailLine("loading body…", Self.dimStyle))
            return
        }
        guard document.summary != "empty" else {
            head.append(Self.rule("no body"))
            return
        }
        let mode = chosen.flatMap { document.availableModes.contains($0) ? $0 : nil } ?? document.detectedMode
        head.append(Self.rule("body (\(mode.title)) · \(document.summary)"))
        body = document.lines(mode)
        self.mode = mode
    }

    /// For a flow a rule changed: which side the tab shows and how to see the other.
    static func sideLines(_ content: FlowDetailContent, tab: DetailTab) -> [DetailLine] {
        guard let title = content.sideTitle(tab) else { return [] }
        let other = content.isOriginSide ? "f: as the client saw it" : "f: as the origin saw it"
        let unchanged = content.ruleChanged(tab) ? "" : " (no rule changed it)"
        var lines = [DetailLine([.init(text: "\(tab.title) \(title)\(unchanged)", style: CellStyle(foreground: .yellow, bold: true)),
                                 .init(text: "  \(other)", style: dimStyle)])]
        if tab == .request && content.isOriginSide {  // the title bar names the client's URL
            lines.append(DetailLine([.init(text: "URL", style: nameStyle), .init(text: " " + content.flow.url, style: .plain)]))
        }
        return lines + [.blank]
    }

    /// `── title ────…` across the screen.
    static func rule(_ title: String) -> DetailLine {
        DetailLine([.init(text: "── ", style: ruleStyle), .init(text: title, style: CellStyle(bold: true)),
                    .init(text: " ", style: ruleStyle)], fill: "─", fillStyle: ruleStyle)
    }
}
