/// A terminal's size in cells: what the backend reports and what rendering draws into.
public struct ScreenSize: Sendable, Hashable {
    public var width: Int
    public var height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }
}
