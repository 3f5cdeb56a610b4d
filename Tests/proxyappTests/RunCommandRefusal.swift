import XCTest
@testable import proxyapp

extension XCTestCase {
    /// What `proxyapp run ARGUMENTS` says when it refuses them before starting (checking the exit
    /// code is the validation one), or "accepted".
    func runRefusal(_ arguments: [String], file: StaticString = #filePath, line: UInt = #line) -> String {
        do {
            _ = try RunCommand.parse(arguments)
            return "accepted"
        } catch {
            XCTAssertEqual(RunCommand.exitCode(for: error), .validationFailure, file: file, line: line)
            return RunCommand.message(for: error)
        }
    }
}
