import ProxyEngine
import Rules

/// Starts a test origin and a proxy for one test and tears both down afterwards, whether the
/// test body returns or throws.
///
/// Each test gets its own servers, ports, database and temporary directory, so tests run in any
/// order and repeatedly without sharing state.
enum Fixture {
    /// - Parameter rules: the rules in force (none by default).
    static func run(
        rules: LiveRules = LiveRules(), breakpoints: Breakpoints = Breakpoints(),
        _ configure: (inout ProxyConfiguration) -> Void = { _ in },
        _ body: (ProxyHarness, TestOrigin) async throws -> Void
    ) async throws {
        let origin = try await TestOrigin.start()
        let proxy: ProxyHarness
        do {
            proxy = try await ProxyHarness.start(rules: rules, breakpoints: breakpoints, configure)
        } catch {
            await origin.shutdown()
            throw error
        }
        do {
            try await body(proxy, origin)
        } catch {
            await proxy.shutdown()
            await origin.shutdown()
            throw error
        }
        await proxy.shutdown()
        await origin.shutdown()
    }

    /// `run` with a TCP echo server as well, for CONNECT targets; stops it afterwards.
    static func withTunnelTarget(_ body: (ProxyHarness, TCPEchoServer) async throws -> Void) async throws {
        let echo = try await TCPEchoServer.start()
        do {
            try await run { proxy, _ in try await body(proxy, echo) }
        } catch {
            await echo.shutdown()
            throw error
        }
        await echo.shutdown()
    }
}
