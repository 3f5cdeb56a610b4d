/// The text `/gzip/N` sends compressed: N numbered lines, repetitive enough that gzip shrinks it,
/// so a test can tell the decoded body from the bytes on the wire.
enum GzipText {
    static func lines(_ count: Int) -> [UInt8] {
        Array((0..<count).map { "line \($0) of the gzip route\n" }.joined().utf8)
    }
}
