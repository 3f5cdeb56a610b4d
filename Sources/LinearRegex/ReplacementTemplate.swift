/// The replacement text of a regex rewrite, parsed once: `$1`…`$N` insert a group's text (`$0`
/// the whole match), `\` takes the next character literally (`\$`, `\\`), a `$` before anything
/// but a digit is itself.
///
/// The same reading as `NSRegularExpression` templates, which the rules file documented before
/// RE2: after `$`, digits are taken while they still name a group (`$12` with one group is group
/// 1, then "2"). Unlike it, a `$N` past the regex's groups is refused rather than left empty.
public struct ReplacementTemplate: Sendable, Equatable {
    enum Piece: Sendable, Equatable {
        case text([UInt8])
        case group(Int)
    }

    /// The template as given.
    public let text: String
    let pieces: [Piece]
    /// The highest group inserted (0 when only the whole match is or none is).
    let highestGroup: Int

    /// Parses `text` for a regex with `groupCount` groups.
    /// - Throws: `LinearRegexError` (about `text`) for a `$N` the regex does not have.
    public init(_ text: String, groupCount: Int) throws(LinearRegexError) {
        var pieces: [Piece] = []
        var literal: [UInt8] = []
        var highest = 0
        let scalars = Array(text.unicodeScalars)
        var index = 0
        func digit(_ offset: Int) -> Int? {
            guard offset < scalars.count, ("0"..."9").contains(scalars[offset]) else { return nil }
            return Int(scalars[offset].value - 0x30)
        }
        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "\\", index + 1 < scalars.count {
                literal.append(contentsOf: String(scalars[index + 1]).utf8)
                index += 2
                continue
            }
            guard scalar == "$", var group = digit(index + 1) else {
                literal.append(contentsOf: String(scalar).utf8)
                index += 1
                continue
            }
            guard group <= groupCount else {
                let position = text.unicodeScalars.index(text.unicodeScalars.startIndex, offsetBy: index)
                let groups = groupCount == 1 ? "1 group" : "\(groupCount) groups"
                throw LinearRegexError(pattern: text, position: position,
                                       reason: "$\(group) names group \(group), but the regex has \(groups) (write \\$ for a $)")
            }
            index += 2
            while let next = digit(index), group * 10 + next <= groupCount {
                group = group * 10 + next
                index += 1
            }
            if !literal.isEmpty {
                pieces.append(.text(literal))
                literal = []
            }
            pieces.append(.group(group))
            highest = max(highest, group)
        }
        if !literal.isEmpty { pieces.append(.text(literal)) }
        self.text = text
        self.pieces = pieces
        self.highestGroup = highest
    }

    /// Appends the replacement for one match of `bytes` (`ranges[0]` the match, then groups).
    func append(to output: inout [UInt8], from bytes: UnsafeBufferPointer<UInt8>, ranges: [Range<Int>?]) {
        for piece in pieces {
            switch piece {
            case .text(let text): output.append(contentsOf: text)
            case .group(let group):
                if let range = ranges[group] { output.append(contentsOf: bytes[range]) }
            }
        }
    }
}
