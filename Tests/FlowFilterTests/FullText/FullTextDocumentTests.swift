import Foundation
import ProxyModel
import XCTest

@testable import FlowFilter

/// A flow's header lines as full-text search sees them (`FullTextDocument.lines`): one
/// `Name: value` line per field, in order, duplicates kept, bytes as they were.
final class FullTextDocumentTests: XCTestCase {
    func testHeadersBecomeOneLineEachInOrder() {
        let fields = [HeaderField(name: "Host", value: "api.example.test"), HeaderField(name: "Set-Cookie", value: "a=1"),
                      HeaderField(name: "Set-Cookie", value: "b=2"), HeaderField(name: "X-Empty", value: "")]
        XCTAssertEqual(FullTextDocument.lines(fields), "Host: api.example.test\nSet-Cookie: a=1\nSet-Cookie: b=2\nX-Empty: \n")
        XCTAssertEqual(FullTextDocument.lines([]), "")
        XCTAssertEqual(FullTextDocument.lines([HeaderField(name: "", value: "")]), ": \n")
    }

    /// Short names live inside the string value, long values on the heap, and a string from
    /// Foundation may not be UTF-8 at all: each kind is copied whole, non-ASCII bytes included.
    func testEveryKindOfStringIsCopiedWhole() {
        let long = String(repeating: "value with a café ", count: 40)
        let bridged = NSString(string: "Naïve-Header 😀 from NSString").substring(from: 0)
        let fields = [HeaderField(name: "X", value: "é"), HeaderField(name: "X-Long", value: long),
                      HeaderField(name: bridged, value: bridged), HeaderField(name: "Ünïcödé", value: "ü😀")]
        let expected = fields.map { "\($0.name): \($0.value)\n" }.joined()
        XCTAssertEqual(FullTextDocument.lines(fields), expected)
        XCTAssertEqual(FullTextDocument.lines(fields).utf8.count, expected.utf8.count)
    }
}
