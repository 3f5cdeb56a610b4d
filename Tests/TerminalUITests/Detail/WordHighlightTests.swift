import FlowFilter
import Foundation
import ProxyModel
import TerminalUI
import XCTest

/// The words a full-text search found are drawn reversed in the detail view, as the index
/// compares them (any case, prefixes), never those under a NOT, wrapped or not.
final class WordHighlightTests: XCTestCase {
    private func reversedWords(_ grid: ScreenGrid) -> [String] {
        var words: [String] = []
        for row in 2..<(grid.height - 1) {
            var word = ""
            for column in 0..<grid.width {
                if grid[row, column].style.reverse {
                    word += grid[row, column].text
                } else if !word.isEmpty {
                    words.append(word)
                    word = ""
                }
            }
            if !word.isEmpty { words.append(word) }
        }
        return words
    }

    func testSearchedWordsAreReversedOnTheResponsePage() throws {
        var state = FlowDetailState()
        state.highlight = WordHighlight([try FullTextQuery(parsing: #"ALICE "admin" sess* NOT nested"#)])
        let grid = DetailFixtures.render(DetailFixtures.content(DetailFixtures.login), state, width: 80, height: 40)
        XCTAssertEqual(reversedWords(grid), ["session", "Alice", "admin"], grid.text)
        XCTAssertTrue(grid.text.contains("\"nested\""), "a NOT word is shown, unmarked")

        state.wraps = false
        let clipped = DetailFixtures.render(DetailFixtures.content(DetailFixtures.login), state, width: 30, height: 40)
        XCTAssertEqual(reversedWords(clipped), ["session", "Alice", "admin"], clipped.text)
    }

    func testNothingIsMarkedWithoutASearch() {
        let grid = DetailFixtures.render(DetailFixtures.content(DetailFixtures.login), FlowDetailState(), width: 80, height: 40)
        XCTAssertEqual(reversedWords(grid), [])
        XCTAssertTrue(WordHighlight([]).isEmpty)
    }
}
