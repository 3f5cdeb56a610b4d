import Foundation
import XCTest
@testable import ProxyEngine

/// The `.mobileconfig` is a property list iOS reads: one root-certificate payload holding the DER
/// exactly, identifiers and UUIDs from the fingerprint (the same CA, the same profile), and a
/// CA name with markup in it escaped.
final class AppleConfigurationProfileTests: XCTestCase {
    private let der: [UInt8] = (0..<300).map { UInt8($0 & 0xFF) }
    private let fingerprint = (0..<32).map { String(format: "%02X", $0 * 7 & 0xFF) }.joined(separator: ":")

    private func plist(_ name: String) throws -> [String: Any] {
        let xml = AppleConfigurationProfile.xml(certificateDER: der, sha256Fingerprint: fingerprint, caName: name)
        let object = try PropertyListSerialization.propertyList(from: Data(xml.utf8), format: nil)
        return try XCTUnwrap(object as? [String: Any])
    }

    func testRootPayloadHoldsTheCertificate() throws {
        let profile = try plist("ProxyApp CA <test> & co")
        XCTAssertEqual(profile["PayloadType"] as? String, "Configuration")
        XCTAssertEqual(profile["PayloadDisplayName"] as? String, "ProxyApp CA (ProxyApp CA <test> & co)")
        let payloads = try XCTUnwrap(profile["PayloadContent"] as? [[String: Any]])
        XCTAssertEqual(payloads.count, 1)
        XCTAssertEqual(payloads[0]["PayloadType"] as? String, "com.apple.security.root")
        XCTAssertEqual(payloads[0]["PayloadContent"] as? Data, Data(der))
        let uuids = [profile["PayloadUUID"], payloads[0]["PayloadUUID"]].compactMap { $0 as? String }
        XCTAssertEqual(uuids.count, 2)
        XCTAssertNotEqual(uuids[0], uuids[1])
        for uuid in uuids { XCTAssertNotNil(UUID(uuidString: uuid), uuid) }
    }

    func testSameCASameIdentifiers() throws {
        let first = try plist("a"), second = try plist("b")
        XCTAssertEqual(first["PayloadUUID"] as? String, second["PayloadUUID"] as? String)
        XCTAssertEqual(first["PayloadIdentifier"] as? String, second["PayloadIdentifier"] as? String)
        let other = AppleConfigurationProfile.xml(certificateDER: der, sha256Fingerprint: String(repeating: "AB:", count: 32),
                                                  caName: "a")
        XCTAssertFalse(other.contains(first["PayloadUUID"] as! String), "another CA gets another profile")
    }
}
