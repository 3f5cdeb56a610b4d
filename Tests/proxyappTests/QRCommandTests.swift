import ArgumentParser
import Foundation
import ProxyCore
import ProxyEngine
import XCTest
@testable import proxyapp

/// `proxyapp qr`: which address it shows, and the message each bad argument or path gets.
final class QRCommandTests: XCTestCase {
    private func interface(_ name: String, _ address: String, up: Bool = true, loopback: Bool = false) -> LocalInterfaceAddress {
        LocalInterfaceAddress(interface: name, address: IPAddressBytes(address)!, isUp: up, isLoopbackInterface: loopback)
    }

    func testAddressChosen() throws {
        let interfaces = [interface("lo", "127.0.0.1", loopback: true), interface("eth0", "fe80::1"),
                          interface("wlan0", "fd00::5"), interface("down0", "10.9.9.9", up: false),
                          interface("wlan0", "192.168.1.5")]
        XCTAssertEqual(try QRCommand.pageURL(address: nil, port: 8080, interfaces: interfaces), "http://192.168.1.5:8080/",
                       "IPv4 first, loopback, link-local and down interfaces skipped")
        XCTAssertEqual(try QRCommand.pageURL(address: nil, port: 9090, interfaces: Array(interfaces.prefix(3))),
                       "http://[fd00::5]:9090/")
        XCTAssertEqual(try QRCommand.pageURL(address: "fd00::7", port: 8080, interfaces: []), "http://[fd00::7]:8080/")
        XCTAssertThrowsError(try QRCommand.pageURL(address: nil, port: 8080, interfaces: Array(interfaces.prefix(2)))) { error in
            XCTAssertTrue("\(error)".contains("no network address a phone can reach") && "\(error)".contains("--address"),
                          "\(error)")
        }
    }

    func testBadArguments() {
        for (arguments, words) in [(["--address", "phone.local"], "--address must be an IPv4 or IPv6 address"),
                                   (["--port", "0"], "--port must be 1 to 65535")] {
            XCTAssertThrowsError(try QRCommand.parse(arguments)) { error in
                XCTAssertTrue(QRCommand.message(for: error).contains(words), QRCommand.message(for: error))
            }
        }
    }

    func testUnwritablePathsAreNamed() throws {
        XCTAssertEqual(QRCommand.whyUnwritable(URL(fileURLWithPath: "/nonexistent-dir/x.png")),
                       "the folder /nonexistent-dir does not exist")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        XCTAssertEqual(QRCommand.whyUnwritable(directory), "it is a folder")
    }
}
