/// How many terminal columns a character takes: 0 for combining marks and other zero-width
/// characters, 2 for East Asian wide and fullwidth characters and emoji, 1 otherwise.
///
/// Our own table rather than libc's `wcwidth`, which depends on the process locale and differs
/// between C libraries: the screen snapshots in tests must come out the same everywhere. A
/// `Character` (a grapheme cluster) takes the width of its first scalar, widened to 2 by an
/// emoji presentation selector; the rest of the cluster (combining marks, ZWJ sequences) adds
/// nothing.
public enum DisplayWidth {
    public static func of(_ character: Character) -> Int {
        let scalars = character.unicodeScalars
        guard let first = scalars.first else { return 0 }
        var width = of(first)
        if width == 1, scalars.contains(where: { $0.value == 0xFE0F }) { width = 2 }
        return width
    }

    public static func of(_ text: String) -> Int {
        text.reduce(0) { $0 + of($1) }
    }

    public static func of(_ scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        if value < 0x20 || (0x7F..<0xA0).contains(value) { return 0 }  // controls: never drawn
        if value < 0x300 { return 1 }  // the common case, fast
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: break
        }
        if value == 0x200B || (0x1160..<0x1200).contains(value) { return 0 }
        return wideRanges.contains { $0.contains(value) } ? 2 : 1
    }

    /// East Asian Wide (W) and Fullwidth (F) blocks, and the emoji blocks terminals draw wide.
    private static let wideRanges: [ClosedRange<UInt32>] = [
        0x1100...0x115F, 0x231A...0x231B, 0x2329...0x232A, 0x23E9...0x23EC, 0x23F0...0x23F0, 0x23F3...0x23F3,
        0x25FD...0x25FE, 0x2614...0x2615, 0x2648...0x2653, 0x267F...0x267F, 0x2693...0x2693, 0x26A1...0x26A1,
        0x26AA...0x26AB, 0x26BD...0x26BE, 0x26C4...0x26C5, 0x26CE...0x26CE, 0x26D4...0x26D4, 0x26EA...0x26EA,
        0x26F2...0x26F3, 0x26F5...0x26F5, 0x26FA...0x26FA, 0x26FD...0x26FD, 0x2705...0x2705, 0x270A...0x270B,
        0x2728...0x2728, 0x274C...0x274C, 0x274E...0x274E, 0x2753...0x2755, 0x2757...0x2757, 0x2795...0x2797,
        0x27B0...0x27B0, 0x27BF...0x27BF, 0x2B1B...0x2B1C, 0x2B50...0x2B50, 0x2B55...0x2B55,
        0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF, 0xA960...0xA97F,
        0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19, 0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
        0x16FE0...0x16FE4, 0x17000...0x18CFF, 0x1B000...0x1B2FF, 0x1F004...0x1F004, 0x1F0CF...0x1F0CF,
        0x1F18E...0x1F18E, 0x1F191...0x1F19A, 0x1F200...0x1F251, 0x1F300...0x1F64F, 0x1F680...0x1F6FF,
        0x1F7E0...0x1F7EB, 0x1F90C...0x1F9FF, 0x1FA70...0x1FAFF, 0x20000...0x2FFFD, 0x30000...0x3FFFD,
    ]
}
