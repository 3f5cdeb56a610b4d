import XCTest
@testable import Rules

/// The type a map_local answer gets from its file's extension.
final class ContentTypeGuessTests: XCTestCase {
    /// Common extensions in any case; no or unknown extension is octet-stream.
    func testGuesses() {
        let cases: [(String, String)] = [
            ("/m/index.html", "text/html; charset=utf-8"),
            ("/m/USER.JSON", "application/json"),
            ("app.js", "text/javascript; charset=utf-8"),
            ("/m/a.b/logo.svg", "image/svg+xml"),
            ("photo.jpeg", "image/jpeg"),
            ("archive.tar.gz", "application/gzip"),
            ("/m/font.woff2", "font/woff2"),
            ("/m/README", "application/octet-stream"),
            ("/m/.htaccess", "application/octet-stream"),
            ("/m/a.b/file", "application/octet-stream"),
            ("/m/data.unknownext", "application/octet-stream"),
            ("/m/trailing.", "application/octet-stream"),
        ]
        for (path, type) in cases {
            XCTAssertEqual(ContentTypeGuess.contentType(forPath: path), type, path)
        }
    }
}
