import Foundation

/// A fresh directory under the system's temporary directory, for tests that need real files: one
/// type for every test target (it was written three times). A test removes it with `remove()`, or
/// gets one removed at its end from `XCTestCase.makeTemporaryDirectory`.
public struct TemporaryDirectory: Sendable {
    /// The directory, created by `init`.
    public let url: URL

    /// `url` as a path.
    public var path: String { url.path }

    /// Creates `<temporary>/<label>-<UUID>`; the label (letters, digits and `-` kept) says which
    /// test left it behind, should one be left.
    public init(_ label: String = "proxyapp-test") throws {
        let safe = label.filter { $0.isLetter || $0.isNumber || $0 == "-" }
        url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("\(safe)-\(UUID().uuidString)")
            .standardizedFileURL
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the directory (not created).
    public func file(_ name: String) -> String { url.appendingPathComponent(name).path }

    /// Writes `text` to `name` inside the directory and returns its path.
    @discardableResult
    public func write(_ name: String, _ text: String) throws -> String {
        let target = file(name)
        try Data(text.utf8).write(to: URL(fileURLWithPath: target))
        return target
    }

    /// Creates the folder `name` (and its parents) inside the directory.
    public func makeFolder(_ name: String) throws {
        try FileManager.default.createDirectory(atPath: file(name), withIntermediateDirectories: true)
    }

    /// Removes the directory and everything in it.
    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }

    /// The POSIX permission bits of `path`.
    public static func mode(of path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }
}
