import Foundation
@testable import Rules
@testable import RulesFile
import TestSupport
import XCTest

/// README's rules example is a file the proxy accepts, with the rules README says it has.
final class READMEExampleTests: XCTestCase {
    func testREADMERulesExampleParses() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try XCTUnwrap(readme.range(of: "## Rules\n"), "README has a Rules section")
        let start = try XCTUnwrap(readme.range(of: "```yaml\n", range: section.upperBound..<readme.endIndex))
        let end = try XCTUnwrap(readme.range(of: "```\n", range: start.upperBound..<readme.endIndex))
        let yaml = String(readme[start.upperBound..<end.lowerBound])

        // The files the example names, in a folder of their own (`~/site/build` is only checked
        // to exist, so the home directory's is swapped for one made here).
        let folder = try makeTemporaryDirectory().url
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("mocks"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("site/build"), withIntermediateDirectories: true)
        try Data("{}".utf8).write(to: folder.appendingPathComponent("mocks/config.json"))
        let text = yaml.replacingOccurrences(of: "~/site/build", with: folder.appendingPathComponent("site/build").path)

        let rules = try RulesFile.parse(text, file: "rules.yml", baseDirectory: folder.path)
        XCTAssertEqual(rules.rules.map(\.name), ["No trackers", "Legal says no", "Mock config", "Static from disk", "Staging",
                                                 "Dev box", "Onion sites through Tor", "Video on a slow phone", "Debug headers and text"])
        XCTAssertEqual(rules.rules.map(\.kind), [.block, .block, .mapLocal, .mapLocal, .mapRemote, .dns, .upstreamProxy,
                                                 .throttle, .rewrite])
        XCTAssertEqual(rules.enabledCount, 8)
        XCTAssertEqual(rules.sslProxying.exclude.patterns.map(\.text), ["*.apple.com", "bank.example.com"])
    }
}
