// A placeholder detail view (the flow's host) until the full detail view lands; same API.
import ProxyModel
public enum DetailTab: Sendable, Hashable, CaseIterable { case request, response, timing }
public enum DetailAction: Sendable, Hashable { case nextTab }
public struct BodyDocument: Sendable { public init(body: CapturedBody, headers: [HeaderField]) {} }
public struct FlowDetailContent: Sendable {
    public var flow: Flow
    public init(flow: Flow, requestBody: BodyDocument?, responseBody: BodyDocument?) { self.flow = flow }
}
public struct FlowDetailState: Sendable, Equatable {
    public init(tab: DetailTab = .response) {}
    public mutating func apply(_ action: DetailAction, content: FlowDetailContent, size: ScreenSize) {}
}
public enum FlowDetailRenderer {
    public static func render(_ state: FlowDetailState, content: FlowDetailContent, size: ScreenSize, message: StatusMessage?) -> ScreenGrid {
        var grid = ScreenGrid(width: size.width, height: size.height); grid.put("DETAIL \(content.flow.host)", row: 0, column: 0); return grid
    }
}
extension KeyBindings { public static let detail = KeyBindings([KeyBinding(.character("q"), "q", .closeDetail), KeyBinding(.tab, "Tab", .detail(.nextTab))]) }
