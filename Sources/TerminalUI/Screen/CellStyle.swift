/// The eight ANSI colours and their bright variants: what every terminal can show.
public enum TerminalColor: UInt8, Sendable, Hashable, CaseIterable {
    case black, red, green, yellow, blue, magenta, cyan, white
    case brightBlack, brightRed, brightGreen, brightYellow, brightBlue, brightMagenta, brightCyan, brightWhite
}

/// How one cell is drawn. Rendering fills a `ScreenGrid` with these; the terminal backend turns
/// changes between two grids into escape sequences.
public struct CellStyle: Sendable, Hashable {
    public var foreground: TerminalColor?
    public var background: TerminalColor?
    public var bold: Bool
    public var dim: Bool
    public var underline: Bool
    /// Swapped foreground and background: the selected row.
    public var reverse: Bool

    public init(foreground: TerminalColor? = nil, background: TerminalColor? = nil, bold: Bool = false,
                dim: Bool = false, underline: Bool = false, reverse: Bool = false) {
        self.foreground = foreground
        self.background = background
        self.bold = bold
        self.dim = dim
        self.underline = underline
        self.reverse = reverse
    }

    public static let plain = CellStyle()
}
