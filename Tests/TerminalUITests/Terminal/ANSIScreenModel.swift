@testable import TerminalUI

/// A tiny terminal for tests: applies cursor positioning (CUP), SGR, ED 2 and printable text
/// (with wide characters, which like a real terminal erase any wide character they half cover)
/// to a grid of cells, so ScreenDiff's bytes can be replayed and the result compared.
struct ANSIScreenModel {
    let width: Int
    let height: Int
    var cells: [Cell]
    var row = 0
    var column = 0
    var style = CellStyle.plain

    init(showing grid: ScreenGrid) {
        width = grid.width
        height = grid.height
        cells = grid.cells
    }

    init(width: Int, height: Int, filler: Cell) {
        self.width = width
        self.height = height
        cells = Array(repeating: filler, count: width * height)
    }

    /// Equal to `grid` cell by cell; a continuation cell's style is not compared, since a
    /// terminal draws the right half of a wide character in the style of its left half.
    func matches(_ grid: ScreenGrid) -> Bool {
        guard grid.width == width, grid.height == height else { return false }
        return zip(grid.cells, cells).allSatisfy { expected, shown in
            expected.isContinuation ? shown.isContinuation : expected == shown
        }
    }

    mutating func apply(_ bytes: [UInt8]) {
        var index = 0
        var text: [UInt8] = []
        while index < bytes.count {
            if bytes[index] == 0x1B, index + 1 < bytes.count, bytes[index + 1] == UInt8(ascii: "[") {
                write(text); text = []
                var end = index + 2
                while end < bytes.count, !(0x40...0x7E).contains(bytes[end]) { end += 1 }
                precondition(end < bytes.count, "unterminated CSI")
                let parameters = String(decoding: bytes[index + 2..<end], as: UTF8.self)
                control(parameters: parameters, final: Character(Unicode.Scalar(bytes[end])))
                index = end + 1
            } else {
                text.append(bytes[index])
                index += 1
            }
        }
        write(text)
    }

    private mutating func control(parameters: String, final: Character) {
        let numbers = parameters.split(separator: ";", omittingEmptySubsequences: false).map { Int($0) ?? 0 }
        switch final {
        case "H":
            row = max(1, numbers.first ?? 1) - 1
            column = max(1, numbers.count > 1 ? numbers[1] : 1) - 1
        case "J":
            precondition(numbers == [2], "only ED 2 is modelled")
            cells = Array(repeating: .blank, count: width * height)
        case "m":
            for number in numbers.isEmpty ? [0] : numbers { applySGR(number) }
        default:
            preconditionFailure("unexpected CSI \(parameters)\(final)")
        }
    }

    private mutating func applySGR(_ number: Int) {
        switch number {
        case 0: style = .plain
        case 1: style.bold = true
        case 2: style.dim = true
        case 4: style.underline = true
        case 7: style.reverse = true
        case 30...37: style.foreground = TerminalColor(rawValue: UInt8(number - 30))
        case 90...97: style.foreground = TerminalColor(rawValue: UInt8(number - 90 + 8))
        case 40...47: style.background = TerminalColor(rawValue: UInt8(number - 40))
        case 100...107: style.background = TerminalColor(rawValue: UInt8(number - 100 + 8))
        default: preconditionFailure("unexpected SGR \(number)")
        }
    }

    private mutating func write(_ bytes: [UInt8]) {
        for character in String(decoding: bytes, as: UTF8.self) {
            let columns = DisplayWidth.of(character)
            precondition(columns > 0 && row < height && column + columns <= width, "write outside the screen")
            cover(columns)
            cells[row * width + column] = Cell(text: String(character), style: style)
            if columns == 2 { cells[row * width + column + 1] = Cell(text: "", style: style) }
            column += columns
        }
    }

    /// Like a real terminal: a wide character partly overwritten is erased, its other half blanked.
    private mutating func cover(_ columns: Int) {
        let first = row * width + column
        if cells[first].isContinuation, column > 0 {
            cells[first - 1] = Cell(text: " ", style: cells[first - 1].style)
        }
        let after = column + columns
        if after < width, cells[first + columns].isContinuation {
            cells[first + columns] = Cell(text: " ", style: cells[first + columns].style)
        }
    }
}
