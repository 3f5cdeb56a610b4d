import Foundation
import NIOCore
import TestSupport
import XCTest
@testable import ProxyEngine

/// `/etc/hosts` as glibc's `files` source reads it: names and aliases in any case, every line's
/// address in order, comments and junk skipped; never blocked by a file that is not regular.
final class HostsFileTests: XCTestCase {
    private func ips(_ hosts: HostsFile, _ name: String) -> [String]? {
        hosts.addresses(of: name)?.compactMap(\.ipAddress)
    }

    func testNamesAliasesAndEveryLine() {
        let hosts = HostsFile(parsing: Array("""
            # comment line
            127.0.0.1\tlocalhost
            192.0.2.1   Web.Example.TEST  web   # trailing comment
            2001:db8::1 web.example.test.
            192.0.2.2 web.example.test\r
            192.0.2.1 web.example.test
            not-an-address broken.test
            0x7f.1 numeric.test
            192.0.2.3
               \t
            ::1 ip6-localhost ip6-loopback
            """.utf8))
        XCTAssertEqual(ips(hosts, "web.example.test"), ["192.0.2.1", "2001:db8::1", "192.0.2.2"])
        XCTAssertEqual(ips(hosts, "web"), ["192.0.2.1"])
        XCTAssertEqual(ips(hosts, "ip6-loopback"), ["::1"])
        XCTAssertEqual(hosts.addresses(of: "web.example.test")?.compactMap(\.port), [0, 0, 0])
        for missing in ["broken.test", "numeric.test", "comment", "trailing", "#", "Web.Example.TEST"] {
            XCTAssertNil(hosts.addresses(of: missing), missing)
        }
    }

    /// Past `maximumAddressesPerName` lines for one name, the rest are ignored.
    func testAddressesPerNameAreBounded() {
        let text = (0..<200).map { "10.0.\($0 / 256).\($0 % 256) many.test" }.joined(separator: "\n")
        XCTAssertEqual(HostsFile(parsing: Array(text.utf8)).addresses(of: "many.test")?.count, HostsFile.maximumAddressesPerName)
    }

    /// A missing file, a directory and a FIFO (which would block an open for reading) are empty tables.
    func testFilesThatAreNotRegularAreEmpty() throws {
        let directory = try makeDirectory()
        let fifo = directory.appendingPathComponent("hosts.fifo")
        XCTAssertEqual(mkfifo(fifo.path, 0o600), 0)
        for path in [fifo.path, directory.path, directory.appendingPathComponent("missing").path] {
            XCTAssertNil(HostsFile.load(path: path).addresses(of: "localhost"), path)
        }
        let file = directory.appendingPathComponent("hosts")
        try "192.0.2.5 file.test\n".write(to: file, atomically: true, encoding: .utf8)
        XCTAssertEqual(ips(HostsFile.load(path: file.path), "file.test"), ["192.0.2.5"])
    }

    private func makeDirectory() throws -> URL {
        let directory = try makeTemporaryDirectory().url
        return directory
    }
}
