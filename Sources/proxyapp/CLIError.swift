/// A failure at run time that names the problem and the fix, printed as `Error: …` without the
/// usage text (which argument-parser adds to `ValidationError`, meant for bad flags).
struct CLIError: Error, CustomStringConvertible {
    var description: String

    init(_ description: String) {
        self.description = description
    }
}
