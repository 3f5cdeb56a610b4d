import Foundation

/// One intercepting proxy in front of a plain HTTP origin and an HTTPS origin (certificate for
/// `localhost`, signed by the origin CA the proxy trusts), so a test can capture plain and
/// decrypted exchanges into the same store. Everything is torn down after the body, whether it
/// returns or throws.
struct InterceptingFixture {
    let proxy: ProxyHarness
    let origin: TestOrigin
    let tlsOrigin: TestOrigin
    let tls: TLSFixtures

    /// `https://localhost:PORT` + `path` on the HTTPS origin.
    func tlsURL(_ path: String) -> String { "https://localhost:\(tlsOrigin.port)\(path)" }

    static func run(_ body: (InterceptingFixture) async throws -> Void) async throws {
        let scratch = FileManager.default.temporaryDirectory
            .appendingPathComponent("proxyapp-intercepting-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let tls = try TLSFixtures(directory: scratch)
        let tlsOrigin = try await TestOrigin.start(tls: try tls.originContext(for: "localhost"))
        var started: [TestOrigin] = [tlsOrigin]
        var proxy: ProxyHarness?
        do {
            let origin = try await TestOrigin.start()
            started.append(origin)
            let harness = try await ProxyHarness.start(interception: { _ in try tls.interception(pins: nil) })
            proxy = harness
            try await body(InterceptingFixture(proxy: harness, origin: origin, tlsOrigin: tlsOrigin, tls: tls))
        } catch {
            await proxy?.shutdown()
            for origin in started { await origin.shutdown() }
            throw error
        }
        await proxy?.shutdown()
        for origin in started { await origin.shutdown() }
    }
}
