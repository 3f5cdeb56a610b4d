import FakeDNS
import Foundation
import NIOCore
import NIOPosix
import ProxyCore
import XCTest
@testable import ProxyEngine

/// Name resolution before and around DNS: literals and RFC 6761 names never become DNS
/// queries, un-normalized hosts are refused, and `/etc/hosts` answers before any server.
final class SystemHostResolverTests: XCTestCase {
    private var server: FakeDNSServer!
    private var resolver: SystemHostResolver!
    private var group: MultiThreadedEventLoopGroup!

    /// The resolver asks a server that never answers: any name reaching DNS would time out.
    override func setUp() async throws {
        server = try await FakeDNSServer.start { _ in .silence }
        resolver = try SystemHostResolver(configuration: .init(timeout: .seconds(10), servers: [server.address]))
        group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
    }

    override func tearDown() async throws {
        resolver.shutdown()
        await server.shutdown()
        try await group.shutdownGracefully()
    }

    private func failure(_ host: String) async -> ProxyFailure? {
        do {
            _ = try await resolver.resolve(host: host, port: 80, on: group.next()).get()
            return nil
        } catch {
            return error as? ProxyFailure
        }
    }

    func testLiteralsAndLocalhost() async throws {
        let loop = group.next()
        let v4 = try await resolver.resolve(host: "127.0.0.2", port: 81, on: loop).get()
        XCTAssertEqual(v4.map(\.port), [81])
        let v6 = try await resolver.resolve(host: "::1", port: 82, on: loop).get()
        XCTAssertEqual(v6.first?.ipAddress, "::1")
        let local = try await resolver.resolve(host: "api.localhost", port: 83, on: loop).get()
        XCTAssertEqual(local.compactMap(\.ipAddress), ["127.0.0.1", "::1"])
        XCTAssertEqual(server.queriedNames, [], "no DNS query for literals and localhost")
    }

    func testInvalidNamesFailWithAReason() async {
        guard case .dnsFailure(let host, let reason)? = await failure("no-such.invalid") else {
            return XCTFail("no-such.invalid resolved")
        }
        XCTAssertEqual(host, "no-such.invalid")
        XCTAssertTrue(reason.contains("RFC 6761"))
        XCTAssertEqual(server.queriedNames, [])
    }

    /// A host that is not in `HostName.normalized` form never reaches DNS, where `0x7f.1` might
    /// find an address no rule looked at.
    func testUnnormalizedHostsAreRefused() async {
        for host in ["0x7f.1", "2130706433", "127.1", "0177.0.0.1", "::ffff:127.0.0.1", "Localhost", "localhost.",
                     "0:0::1", "Example.COM", "example.com."] {
            let failure = await failure(host)
            XCTAssertEqual(failure, .dnsFailure(host: host, reason: "not resolved: the host is not in canonical form"), host)
        }
        XCTAssertEqual(server.queriedNames, [])
    }

    /// Names no DNS message can carry (an empty label, a label over 63 bytes, over 255 in all)
    /// fail at once with a reason, without a query.
    func testNamesDNSCannotCarryFailInWords() async {
        let long = String(repeating: "a", count: 64) + ".test"
        let longer = Array(repeating: String(repeating: "b", count: 60), count: 5).joined(separator: ".")
        for host in ["a..b", long, longer] {
            let failure = await failure(host)
            guard case .dnsFailure(host, let reason)? = failure else { return XCTFail("\(host): \(String(describing: failure))") }
            XCTAssertTrue(reason == "not a name DNS can look up" || reason == "not resolved: the host is not in canonical form",
                          "\(host): \(reason)")
        }
        XCTAssertEqual(server.queriedNames, [])
    }

    /// Names in `/etc/hosts` resolve to its addresses without asking the (silent) server, as
    /// glibc's `files dns` order does. Uses the machine's own entries, other than localhost.
    func testHostsFileEntriesAnswerBeforeDNS() async throws {
        let entries = try Self.hostsFileEntries()
        guard !entries.isEmpty else { throw XCTSkip("/etc/hosts names nothing but localhost here") }
        for (name, addresses) in entries.prefix(5) {
            let resolved = try await resolver.resolve(host: name, port: 80, on: group.next()).get()
            XCTAssertEqual(Set(resolved.compactMap(\.ipAddress)), addresses, name)
        }
        XCTAssertEqual(server.queriedNames, [])
    }

    /// `/etc/hosts` names in canonical form (not localhost), with every address listed for each.
    private static func hostsFileEntries() throws -> [(String, Set<String>)] {
        var table: [String: Set<String>] = [:]
        for line in try String(contentsOfFile: "/etc/hosts", encoding: .utf8).split(separator: "\n") {
            let fields = line.prefix { $0 != "#" }.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
            guard fields.count > 1, let address = try? SocketAddress(ipAddress: fields[0], port: 0),
                  let text = address.ipAddress else { continue }
            for name in fields.dropFirst() where HostName.normalized(name) == name && name != "localhost"
                && !name.hasSuffix(".localhost") && (try? SocketAddress(ipAddress: name, port: 0)) == nil {
                table[name, default: []].insert(text)
            }
        }
        return table.sorted { $0.key < $1.key }
    }

    /// mDNS names (`*.local`) go to `getaddrinfo` (the system's NSS modules answer them), every
    /// other name to DNS: a stuck `.local` name never holds a DNS lookup back, nor the reverse.
    func testLocalNamesGoToTheSystemResolverAndOthersToDNS() async throws {
        let dns = ManualLookupBackend()
        let mdns = ManualLookupBackend()
        let routed = SystemHostResolver(configuration: .init(timeout: .seconds(10)), backend: dns, multicastBackend: mdns)
        defer { routed.shutdown() }
        let printer = routed.resolve(host: "printer.local", port: 631, on: group.next())
        let example = routed.resolve(host: "example.com", port: 80, on: group.next())
        XCTAssertEqual([mdns.asks("printer.local"), dns.asks("printer.local")], [1, 0])
        XCTAssertEqual([dns.asks("example.com"), mdns.asks("example.com")], [1, 0])
        dns.answer("example.com", .success([try SocketAddress(ipAddress: "192.0.2.1", port: 0)]))
        let resolved = try await example.get()
        XCTAssertEqual(resolved.map(\.port), [80], "DNS answered while the .local name is still pending")
        mdns.answer("printer.local", .success([try SocketAddress(ipAddress: "192.0.2.9", port: 0)]))
        let printers = try await printer.get()
        XCTAssertEqual(printers.compactMap(\.ipAddress), ["192.0.2.9"])
    }

    /// The system resolver's own answer for a name `/etc/hosts` has, through `SystemNameLookup`.
    func testSystemNameLookupAsksGetaddrinfo() throws {
        let addresses = try SystemNameLookup.lookUp("localhost").get()
        XCTAssertTrue(addresses.contains { $0.ipAddress == "127.0.0.1" }, "\(addresses)")
        guard case .failure = SystemNameLookup.lookUp("no-such-name.invalid") else {
            return XCTFail("an unknown name resolved")
        }
    }
}
