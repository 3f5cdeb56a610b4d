/// Why a HAR file could not be imported: where in the document (a JSON path such as
/// `log.entries[3].request.url`, or `$` for the document itself) and what is wrong there.
///
/// It exists so a user with a 40 MB HAR from someone else's browser can find the one bad field.
/// An import either reads every entry or fails with one of these; it never returns part of a file.
public struct HARImportError: Error, CustomStringConvertible, Sendable, Equatable {
    /// Where the problem is: `log.entries[3].request.url`; `$` for the whole document.
    public let path: String
    /// What is wrong there, in one line.
    public let reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { "\(path): \(reason)" }
}
