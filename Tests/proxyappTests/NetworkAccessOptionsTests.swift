import ArgumentParser
import ProxyCore
import ProxyEngine
import XCTest
@testable import proxyapp

/// `--listen` (repeated), `--lan`, `--auth`, `--allow-clients`, `--allow-internal`: what they
/// bind, the policy they make, the refusals, and the banner lines a user reads.
final class NetworkAccessOptionsTests: XCTestCase {
    private let interfaces = [
        LocalInterfaceAddress(interface: "lo", address: IPAddressBytes("127.0.0.1")!, isUp: true, isLoopbackInterface: true),
        LocalInterfaceAddress(interface: "wlan0", address: IPAddressBytes("192.168.1.5")!, isUp: true, isLoopbackInterface: false),
        LocalInterfaceAddress(interface: "wlan0", address: IPAddressBytes("fe80::1")!, isUp: true, isLoopbackInterface: false),
        LocalInterfaceAddress(interface: "eth1", address: IPAddressBytes("10.0.0.9")!, isUp: false, isLoopbackInterface: false),
        LocalInterfaceAddress(interface: "ap0", address: IPAddressBytes("fd00::7")!, isUp: true, isLoopbackInterface: false),
    ]

    private func parse(_ arguments: [String]) throws -> NetworkAccessOptions {
        try RunCommand.parse(arguments).network
    }

    private func assertRefused(_ arguments: [String], mentioning texts: [String], file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try RunCommand.parse(arguments), file: file, line: line) { error in
            let message = RunCommand.message(for: error)
            for text in texts { XCTAssertTrue(message.contains(text), "\(arguments): \(message)", file: file, line: line) }
            XCTAssertEqual(RunCommand.exitCode(for: error), .validationFailure, file: file, line: line)
        }
    }

    /// Off loopback with no guard is refused before anything starts, naming both flags.
    func testListeningOffLoopbackNeedsAGuard() throws {
        for arguments in [["--listen", "0.0.0.0"], ["--lan"], ["--listen", "127.0.0.1:1", "--listen", "[::]:8080"],
                          ["--listen", "my-box.lan"]] {
            assertRefused(arguments, mentioning: ["--auth USER:PASS", "--allow-clients"])
        }
        XCTAssertNoThrow(try parse(["--listen", "0.0.0.0", "--auth", "u:p"]))
        XCTAssertNoThrow(try parse(["--lan", "--allow-clients", "192.168.1.0/24"]))
        XCTAssertNoThrow(try parse(["--listen", "localhost", "--listen", "[::1]:9"]))
        assertRefused(["--lan", "--auth", "u:p", "--listen", ":1", "--listen", ":2"], mentioning: ["at most one --listen"])
    }

    func testBadValuesSayWhy() {
        assertRefused(["--auth", "nopassword"], mentioning: ["--auth", "no ':'", "USER:PASS"])
        assertRefused(["--auth", "u:"], mentioning: ["password", "is empty"])
        assertRefused(["--allow-clients", "10.0.0.0/8,bogus"], mentioning: ["--allow-clients", "'bogus' is not an IPv4 or IPv6 address"])
        assertRefused(["--allow-clients", "10.0.0.0/40"], mentioning: ["prefix length from 0 to 32"])
        assertRefused(["--allow-clients", ""], mentioning: ["no address"])
    }

    func testLanBindsLoopbackAndUsableInterfaces() throws {
        let options = try parse(["--lan", "--auth", "u:p", "--listen", ":9090"])
        XCTAssertEqual(options.bindAddresses(interfaces: interfaces).map(\.description),
                       ["127.0.0.1:9090", "192.168.1.5:9090", "[fd00::7]:9090"])
        let defaultPort = try parse(["--lan", "--auth", "u:p"])
        XCTAssertEqual(defaultPort.bindAddresses(interfaces: interfaces).first?.description, "127.0.0.1:8080")
        let listed = try parse(["--listen", "127.0.0.1:1", "--listen", "[::1]:2"])
        XCTAssertEqual(listed.bindAddresses(interfaces: interfaces).map(\.description), ["127.0.0.1:1", "[::1]:2"])
    }

    func testPolicyFromFlags() throws {
        let options = try parse(["--lan", "--auth", "alice:a", "--auth", "bob:b:c", "--allow-clients", "192.168.1.0/24,fd00::/8",
                                 "--allow-clients", "10.0.0.7"])
        let policy = options.policy(interfaces: interfaces, bound: options.bindAddresses(interfaces: interfaces))
        XCTAssertEqual(policy.credentials.count, 2)
        XCTAssertEqual(policy.credentials.user(name: Array("bob".utf8), password: Array("b:c".utf8)), "bob")
        XCTAssertEqual(policy.allowedClients.map(\.description), ["192.168.1.0/24", "fd00::/8", "10.0.0.7/32"])
        XCTAssertFalse(policy.allowsInternalDestinations)
        // Every interface address is the machine's own, the down one too.
        XCTAssertTrue(policy.isInternal(IPAddressBytes("10.0.0.9")!))
        XCTAssertTrue(policy.isInternal(IPAddressBytes("192.168.1.5")!))
        XCTAssertTrue(try parse(["--allow-internal"]).policy(interfaces: [], bound: []).allowsInternalDestinations)
    }

    /// The banner names URLs a phone can type: never 0.0.0.0, never a down or link-local address.
    func testBannerLinesForDevices() {
        let any = [ListenAddress(host: "0.0.0.0", port: 8080)]
        XCTAssertEqual(AccessBanner.deviceLines(bound: any, interfaces: interfaces, caPage: true), [
            "Devices on the network: set the proxy to one of these, then open its CA page:",
            "  http://192.168.1.5:8080 (wlan0)   CA: http://192.168.1.5:8080/ProxyCA.cer",
        ])
        let both = [ListenAddress(host: "::", port: 1)]
        XCTAssertEqual(AccessBanner.deviceLines(bound: both, interfaces: interfaces, caPage: false).dropFirst(), [
            "  http://192.168.1.5:1 (wlan0)", "  http://[fd00::7]:1 (ap0)",
        ])
        XCTAssertEqual(AccessBanner.deviceLines(bound: [.default], interfaces: interfaces, caPage: true), [])
        XCTAssertEqual(AccessBanner.localAddress(ListenAddress(host: "0.0.0.0", port: 3)).description, "127.0.0.1:3")
        XCTAssertEqual(AccessBanner.localAddress(ListenAddress(host: "::", port: 3)).description, "[::1]:3")
    }

    func testAccessLine() throws {
        XCTAssertEqual(AccessBanner.accessLine(ClientAccessPolicy(), offLoopback: false),
                       "Access: this machine only (listening on loopback)")
        let options = try parse(["--lan", "--auth", "a:b"])
        XCTAssertEqual(AccessBanner.accessLine(options.policy(interfaces: [], bound: []), offLoopback: true),
                       "Access: every client logs in (--auth, 1 user); any address may try to log in; "
                       + "they may not reach this machine's own services")
    }
}

/// `--auth-file FILE`: its users join the policy, it guards listening off loopback as `--auth`
/// does, and a file that cannot be used stops the start with the file, line and fix.
final class AuthFileOptionTests: XCTestCase {
    private let hash = "$2y$04$rh9qr9wdgVAlVW2Xc6t7Cu4Udh.KEb.6aer1JfBpeojXGv/2LjScu"

    private func file(_ text: String) throws -> String {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("proxyapp-authfile-\(UUID().uuidString)")
        try Data(text.utf8).write(to: url)
        addTeardownBlock { try? FileManager.default.removeItem(at: url) }
        return url.path
    }

    func testUsersJoinThePolicyAndGuardTheLAN() throws {
        let path = try file("# phones\nphone:\(hash)\n")
        let options = try RunCommand.parse(["--auth-file", path, "--auth", "me:pw", "--listen", "0.0.0.0:8080"]).network
        let policy = options.policy(interfaces: [], bound: [])
        XCTAssertEqual(policy.credentials.count, 2)
        guard case .needsHashCheck = policy.credentials.login(name: Array("phone".utf8), password: Array("x".utf8)) else {
            return XCTFail("the file's user is not known")
        }
        XCTAssertNoThrow(try RunCommand.parse(["--auth-file", path, "--lan"]))
    }

    func testUnusableFilesAreNamed() throws {
        XCTAssertEqual(runRefusal(["--auth-file", "/nonexistent/users"]),
                       "--auth-file /nonexistent/users: cannot read it (no such file); create it with: htpasswd -B -c /nonexistent/users USER.")
        let md5 = try file("a:$apr1$xyz$abcdefghijklmnopqrstuv\n")
        XCTAssertTrue(runRefusal(["--auth-file", md5]).contains("--auth-file \(md5): line 1: user 'a' has an MD5 ($apr1$) hash"),
                      runRefusal(["--auth-file", md5]))
        let empty = try file("\n")
        XCTAssertTrue(runRefusal(["--auth-file", empty]).contains("the file has no users"))
        XCTAssertTrue(runRefusal(["--auth-file", FileManager.default.temporaryDirectory.path]).contains("cannot read it"))
    }
}
