import Foundation
@testable import Rules
@testable import RulesFile
import RulesTestSupport
import TestSupport
import XCTest

/// Reading a rules file from disk: size limit, encoding, unreadable files, and where relative
/// paths start.
final class RulesFileReadTests: XCTestCase {
    private var folder: TemporaryDirectory!

    override func setUpWithError() throws {
        folder = try TemporaryDirectory("rules-tests")
    }

    override func tearDown() {
        folder.remove()
    }

    private func issues(reading path: String) -> [RulesFileIssue] {
        do {
            _ = try RulesFile.load(path: path)
            XCTFail("\(path) loaded")
            return []
        } catch {
            return error.issues
        }
    }

    /// Bytes that are not UTF-8 are refused as a whole, without a place.
    func testNotUTF8() {
        XCTAssertThrowsError(try RulesFile.parse(data: Data([0x72, 0x75, 0xFF, 0xFE]), file: "bad.yaml")) { error in
            let error = error as! RulesFileError
            XCTAssertEqual(error.file, "bad.yaml")
            XCTAssertEqual(error.issues, [issue(0, 0, nil, "the file is not UTF-8 text: save it as UTF-8")])
            XCTAssertEqual(error.description, "bad.yaml: the file is not UTF-8 text: save it as UTF-8")
        }
    }

    /// A file over the size limit is refused before it is read; one at the limit is read.
    func testSizeLimit() throws {
        let atLimit = folder.file("at-limit.yaml")
        try Data(repeating: UInt8(ascii: "#"), count: RulesFile.maximumBytes).write(to: URL(fileURLWithPath: atLimit))
        XCTAssertEqual(try RulesFile.read(path: atLimit).count, 4 << 20)

        let over = folder.file("over.yaml")
        try Data(repeating: UInt8(ascii: "#"), count: 5 << 20).write(to: URL(fileURLWithPath: over))
        XCTAssertEqual(issues(reading: over),
                       [issue(0, 0, nil, "the file is 5242880 bytes; a rules file may hold at most 4 MiB (4194304 bytes)")])
    }

    /// A missing file is named as such.
    func testMissingFile() {
        let path = folder.file("none.yaml")
        let found = issues(reading: path)
        XCTAssertEqual(found, [issue(0, 0, nil, "cannot read the file: no such file")])
        XCTAssertEqual(RulesFileError(file: path, issues: found).description, "\(path): cannot read the file: no such file")
    }

    /// A loaded file is the set's source, and its issues name it.
    func testLoadNamesTheFile() throws {
        let good = try folder.write("good.yaml", "rules:\n  - match: { host: a.com }\n    block: {}\n")
        XCTAssertEqual(try RulesFile.load(path: good).source, good)

        let bad = try folder.write("bad.yaml", "rules: yes\n")
        XCTAssertThrowsError(try RulesFile.load(path: bad)) { error in
            XCTAssertEqual((error as! RulesFileError).description,
                           "\(bad):1:8: 'rules' must be a list of rules (lines starting with '- '), not 'yes'")
        }
    }

    /// `parse(data:file:)` starts relative map_local paths at the file's folder.
    func testParseDataUsesTheFilesFolder() throws {
        let text = "rules:\n  - enabled: false\n    match: { host: a.com }\n    map_local: { dir: mocks/../www }\n"
        let rules = try RulesFile.parse(data: Data(text.utf8), file: "/srv/proxy/rules.yaml")
        guard case .mapLocal(let local) = rules.rules.first?.action else { return XCTFail() }
        XCTAssertEqual(local.source, .directory("/srv/proxy/www"))
        XCTAssertEqual(rules.source, "/srv/proxy/rules.yaml")
    }

    /// A control character is a YAML reader error: one line, at the character (it used to be a
    /// three-line message without a place).
    func testControlCharacter() {
        assertIssue("rules:\n  - name: a\u{7}\n", issue(2, 12, nil, "not valid YAML: control characters are not allowed"))
        assertIssue("# é\r\nrules: [\u{1B}]\n", issue(2, 9, nil, "not valid YAML: control characters are not allowed"))
    }
}
