import Foundation
import ProxyModel

/// What the detail view shows for one flow: the flow and its two bodies, decoded.
///
/// The body documents are built off the render thread (`BodyDocument.init` decodes and indexes);
/// nil means "still loading", and the view says so until the app supplies them.
public struct FlowDetailContent: Sendable {
    public var flow: Flow
    public var requestBody: BodyDocument?
    public var responseBody: BodyDocument?
    /// The zone the Timing tab writes times in.
    public var timeZone: TimeZone
    /// The bodies of the origin's side where a rule changed them (`Flow.forwardedRequest`,
    /// `Flow.originResponse`); nil while loading or when the body is the client's.
    public var forwardedRequestBody: BodyDocument?
    public var originResponseBody: BodyDocument?
    /// Whether these pages show the origin's side (`originSide`).
    private(set) var isOriginSide = false
    /// A WebSocket flow's messages, oldest first (nil while loading, or for other flows), and
    /// how many the flow has in all (more than `messages` holds when only the first are loaded).
    public var messages: [CapturedMessage]?

    public init(flow: Flow, requestBody: BodyDocument?, responseBody: BodyDocument?, timeZone: TimeZone = .current,
                forwardedRequestBody: BodyDocument? = nil, originResponseBody: BodyDocument? = nil) {
        self.flow = flow
        self.requestBody = requestBody
        self.responseBody = responseBody
        self.timeZone = timeZone
        self.forwardedRequestBody = forwardedRequestBody
        self.originResponseBody = originResponseBody
    }

    /// The content as the origin saw the exchange: the request as forwarded and the response as
    /// the origin sent it, each the client's where no rule changed it.
    var originSide: FlowDetailContent {
        var side = FlowDetailContent(
            flow: flow.originSide,
            requestBody: flow.forwardedRequest?.body == nil ? requestBody : forwardedRequestBody,
            responseBody: flow.originResponse?.body == nil ? responseBody : originResponseBody, timeZone: timeZone)
        side.isOriginSide = true
        side.original = flow
        side.messages = messages
        return side
    }

    /// On the origin's side, the flow as stored (which messages a rule changed).
    private(set) var original: Flow?

    /// Which side a message tab shows, in words, for a flow with two sides; nil otherwise.
    func sideTitle(_ tab: DetailTab) -> String? {
        guard (original ?? flow).hasOriginSide else { return nil }
        switch (tab, isOriginSide) {
        case (.request, false): return "as sent by the client"
        case (.request, true): return "as forwarded to the origin"
        case (.response, false): return "as the client got it"
        case (.response, true): return "as the origin sent it"
        case (.timing, _), (.webSocket, _): return nil
        }
    }

    /// The flow upgraded to a WebSocket: it has a WebSocket tab.
    public var isWebSocket: Bool {
        flow.kind == .http && (flow.status == 101 || flow.messageCount > 0)
    }

    /// The tabs this flow has, in order.
    public var tabs: [DetailTab] {
        isWebSocket ? DetailTab.allCases : DetailTab.allCases.filter { $0 != .webSocket }
    }

    /// Whether a rule changed `tab`'s message (so its two sides differ).
    func ruleChanged(_ tab: DetailTab) -> Bool {
        let stored = original ?? flow
        return tab == .request ? stored.forwardedRequest != nil : stored.originResponse != nil
    }

    /// The body document a tab shows; nil for the Timing tab or while loading.
    func body(for tab: DetailTab) -> BodyDocument? {
        switch tab {
        case .request: requestBody
        case .response: responseBody
        case .timing, .webSocket: nil
        }
    }
}

/// One line of a detail page before it is placed on screen: styled runs of text, and an
/// optional character that fills the rest of the row (the `──` of a section rule).
struct DetailLine: Sendable, Equatable {
    struct Run: Sendable, Equatable {
        var text: String
        var style: CellStyle
    }

    var runs: [Run]
    var fill: Character?
    var fillStyle: CellStyle

    init(_ runs: [Run], fill: Character? = nil, fillStyle: CellStyle = .plain) {
        self.runs = runs
        self.fill = fill
        self.fillStyle = fillStyle
    }

    init(_ text: String, _ style: CellStyle = .plain) {
        self.init([Run(text: text, style: style)])
    }

    static let blank = DetailLine("")

    /// Columns the runs take.
    var width: Int {
        runs.reduce(0) { total, run in run.text.reduce(total) { $0 + ScreenGrid.columns(of: $1) } }
    }
}

/// One tab's scrollable content: a few styled lines (request line, headers, the body rule),
/// then the body's lines, produced lazily. Both the state (to clamp scrolling) and the renderer
/// build it; it is cheap because only the header part is materialised.
struct DetailPage {
    var head: [DetailLine]
    var body: BodyLines
    /// The view mode `body` is in; nil on pages without a body.
    var mode: BodyViewMode?

    var lineCount: Int { head.count + body.count }

    init(content: FlowDetailContent, tab: DetailTab, mode: BodyViewMode?) {
        switch tab {
        case .timing:
            head = TimingPage.lines(content.flow, timeZone: content.timeZone)
            body = .empty
            self.mode = nil
        case .webSocket:
            head = WebSocketPage.lines(content.messages, flow: content.flow, timeZone: content.timeZone)
            body = .empty
            self.mode = nil
        case .request, .response:
            let message = MessagePage(flow: content.flow, tab: tab, document: content.body(for: tab), mode: mode)
            head = MessagePage.sideLines(content, tab: tab) + message.head
            body = message.body
            self.mode = message.mode
        }
    }

    /// Words drawn reversed on every line (`WordHighlight`).
    var highlight = WordHighlight([])

    /// The line at `index` as runs; body lines are plain but for highlighted words.
    func line(_ index: Int) -> DetailLine {
        highlight.apply(to: index < head.count ? head[index] : DetailLine(body.line(index - head.count)))
    }
}
