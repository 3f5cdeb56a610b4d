import ArgumentParser
import ProxyEngine
import XCTest
@testable import proxyapp

/// `--reverse [LISTEN=]URL`: the mappings it makes, the banner, and each mistake refused
/// before anything starts — an off-loopback reverse listener without `--allow-clients` first.
final class ReverseOptionsTests: XCTestCase {
    func testMappings() throws {
        let options = try RunCommand.parse(["--reverse", "https://API.example.com", "--reverse", "9000=http://127.0.0.1:3000/",
                                            "--reverse", "[::1]:9001=https://[::1]:8443"]).reverseOptions
        XCTAssertEqual(options.reverse, [
            ReverseMapping(listen: .init(host: "127.0.0.1", port: 8081), scheme: "https", host: "api.example.com", port: 443),
            ReverseMapping(listen: .init(host: "127.0.0.1", port: 9000), scheme: "http", host: "127.0.0.1", port: 3000),
            ReverseMapping(listen: .init(host: "::1", port: 9001), scheme: "https", host: "::1", port: 8443),
        ])
        XCTAssertEqual(options.bannerLines, ["Reverse: http://127.0.0.1:8081 → https://api.example.com",
                                             "Reverse: http://127.0.0.1:9000 → http://127.0.0.1:3000",
                                             "Reverse: http://[::1]:9001 → https://[::1]:8443"])
        XCTAssertNoThrow(try RunCommand.parse(["--reverse", "0.0.0.0:9000=http://h", "--allow-clients", "192.168.1.0/24"]))
        let tls = try RunCommand.parse(["--reverse", "8443=https://api.example.com", "--reverse-tls"]).reverseOptions
        XCTAssertEqual(tls.mappings.map(\.tls), [true])
        XCTAssertEqual(tls.bannerLines, ["Reverse: https://127.0.0.1:8443 → https://api.example.com "
                                         + "(certificate for api.example.com; clients trust the root CA)"])
    }

    func testMistakes() {
        XCTAssertTrue(runRefusal(["--reverse", "0.0.0.0:9000=http://h"]).contains("pass --allow-clients CIDR"))
        XCTAssertTrue(runRefusal(["--reverse", "0.0.0.0:9000=http://h", "--auth", "u:p"]).contains("cannot log in"))
        XCTAssertTrue(runRefusal(["--reverse", "9000=http://h/api"]).contains("has a path or query"))
        XCTAssertTrue(runRefusal(["--reverse", "9000=ftp://h"]).contains("Write LISTEN=URL"), runRefusal(["--reverse", "9000=ftp://h"]))
        XCTAssertTrue(runRefusal(["--reverse", "[x]=http://h"]).contains("Write HOST:PORT"))
        XCTAssertTrue(runRefusal(["--reverse", "9000=ftp://h"]).contains("the scheme must be http or https, not 'ftp'"))
        XCTAssertTrue(runRefusal(["--reverse-tls"]).contains("give --reverse [LISTEN=]URL too"))
        XCTAssertTrue(runRefusal(["--reverse", "http://a", "--reverse-tls", "--no-intercept"]).contains("drop one of them"))
        XCTAssertTrue(runRefusal(["--reverse", "http://a", "--reverse", "http://b"]).contains("two mappings listen on 127.0.0.1:8081"))
    }
}
