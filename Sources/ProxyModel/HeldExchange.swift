/// An exchange held at a breakpoint, as lists show it: the TUI's held panel and the control
/// channel's `holds` both carry this.
public struct HeldExchange: Codable, Sendable, Hashable {
    public var id: Int
    /// `request` or `response`.
    public var side: String
    public var method: String
    public var url: String
    /// The response's status (a held response); nil for a held request.
    public var status: Int?
    /// Seconds since it was held.
    public var seconds: Double

    public init(id: Int, side: String, method: String, url: String, status: Int?, seconds: Double) {
        self.id = id
        self.side = side
        self.method = method
        self.url = url
        self.status = status
        self.seconds = seconds
    }
}
