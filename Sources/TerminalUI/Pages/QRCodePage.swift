import QRCode

/// The `Q` screen: the CA page of one network address as a QR code a phone's camera opens, with
/// ←/→ to go through the addresses (Wi-Fi, Ethernet, a hotspot). Drawn black on bright white
/// whatever the terminal's colours, with a two-module quiet zone: a short URL's code (29 modules)
/// takes 33 columns and 17 rows, so it fits an 80×24 terminal with room for the text.
public enum QRCodePage {
    public static let title = "ProxyApp  scan with a phone"
    public static let hint = "←/→ address  any other key closes"

    /// The code's colours: dark modules black, light ones bright white.
    static let codeStyle = CellStyle(foreground: .black, background: .brightWhite)

    public static func render(targets: [ProxyInfo.ScanTarget], index: Int, size: ScreenSize,
                              message: StatusMessage? = nil) -> ScreenGrid {
        var grid = ScreenGrid(width: size.width, height: size.height)
        guard size.height > 0, size.width > 0 else { return grid }
        ScreenChrome.drawTitleBar(title, into: &grid)
        var text: [String]
        var code: [String] = []
        if targets.isEmpty {
            text = ["The proxy listens on loopback only: a phone cannot reach it.",
                    "Start it with --lan and --auth USER:PASS (or --allow-clients), then press Q again."]
        } else {
            let target = targets[min(max(0, index), targets.count - 1)]
            let position = targets.count > 1 ? "  (\(min(max(0, index), targets.count - 1) + 1) of \(targets.count))" : ""
            text = ["Scan to open the CA page: \(target.url)" + (target.label.isEmpty ? "" : " on \(target.label)") + position,
                    "First set the phone's Wi-Fi proxy to this address (and the --auth user, if any)."]
            do {
                code = try QRCode(encoding: target.url).halfBlockLines(quietZone: 2)
            } catch {
                text.append("No QR code: \(error.description)")
            }
        }
        let rows = max(0, size.height - 2)
        let needed = code.count + text.count + 1
        let codeWidth = code.first.map(DisplayWidth.of) ?? 0
        if !code.isEmpty, needed > rows || codeWidth > size.width {
            text.append("Make the terminal at least \(codeWidth)×\(code.count + text.count + 3) to show the QR code.")
            code = []
        }
        var row = 1
        for line in text where row < size.height - 1 {
            grid.put(ColumnText.fitted(line, width: size.width), row: row, column: 0)
            row += 1
        }
        row += 1
        let column = max(0, (size.width - codeWidth) / 2)
        for line in code where row < size.height - 1 {
            grid.put(line, row: row, column: column, style: codeStyle)
            row += 1
        }
        if size.height > 1 {
            ScreenChrome.drawStatusLine(position: "QR code", message: message, hint: hint, row: size.height - 1, into: &grid)
        }
        return grid
    }
}
