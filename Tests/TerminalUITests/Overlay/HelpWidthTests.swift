import TerminalUI
import XCTest

/// The `?` screens fit an 80-column terminal: every key with its description, the prompt keys
/// (readline's) and the filter summary are read whole, never cut at the edge.
final class HelpWidthTests: XCTestCase {
    func testEveryHelpLineFitsEightyColumns() {
        for (bindings, title) in [(KeyBindings.standard, "Flow list"), (KeyBindings.detail, "Flow detail")] {
            let lines = HelpRenderer.lines(for: bindings, title: title)
            for line in lines {
                XCTAssertLessThanOrEqual(line.count, 79, "\(title): \(line)")  // drawn from column 1
            }
            let screen = HelpRenderer.render(lines: lines, scroll: 0, size: ScreenSize(width: 80, height: 50)).text
            XCTAssertTrue(screen.contains("Ctrl-U clears the line"), screen)
        }
        let list = HelpRenderer.lines(for: KeyBindings.standard, title: "Flow list").joined(separator: "\n")
        XCTAssertTrue(list.contains("copy: then u URL, c curl, b body, r raw request"), list)
        let detail = HelpRenderer.lines(for: KeyBindings.detail, title: "Flow detail").joined(separator: "\n")
        XCTAssertTrue(detail.contains("wrap long lines, or cut them at the edge"), detail)
    }
}
