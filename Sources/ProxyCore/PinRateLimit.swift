import Foundation
import ProxyModel

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How many new pins one client address may make per minute.
///
/// A client decides what it rejects: without a limit one client could pin thousands of hosts in
/// seconds (pins are per client, but a client can change its fingerprint at will, and every pin
/// takes room under `--max-pins`). Only new pins count; a renewed pin does not. Clients are keyed by
/// address without the port; IPv6 clients by their /64, which one machine usually owns whole.
/// Pure and clock-free (the caller passes `now`), like `AutoPinPolicy`, which owns it.
struct PinRateLimit: Sendable {
    /// New pins allowed per client address in any 60 s.
    let perMinute: Int
    static let window: TimeInterval = 60

    /// Times of the recent new pins, by client key.
    private var recent: [String: [Date]] = [:]
    /// `recent` is swept of stale clients when it grows past this (amortised).
    private var sweepThreshold = Self.minimumSweepThreshold
    private static let minimumSweepThreshold = 256

    init(perMinute: Int) {
        precondition(perMinute >= 1, "a pin rate must be at least 1 per minute")
        self.perMinute = perMinute
    }

    /// Whether `client` may make a new pin at `now`; when it may, the pin is counted.
    mutating func admit(client address: String, now: Date) -> Bool {
        let key = Self.clientKey(address)
        var times = (recent[key] ?? []).filter { now.timeIntervalSince($0) < Self.window }
        guard times.count < perMinute else {
            recent[key] = times
            return false
        }
        times.append(now)
        recent[key] = times
        sweep(now: now)
        return true
    }

    /// The clients with a recent new pin (for tests of the sweep).
    var trackedClients: Int { recent.count }

    /// Drops clients with no pin in the window once there are many; the next sweep waits until
    /// the table has doubled.
    private mutating func sweep(now: Date) {
        guard recent.count > sweepThreshold else { return }
        recent = recent.filter { _, times in times.contains { now.timeIntervalSince($0) < Self.window } }
        sweepThreshold = max(Self.minimumSweepThreshold, recent.count * 2)
    }

    /// The part of a client address that limits count against: the IP without the port
    /// (`10.0.0.7:5000` → `10.0.0.7`), an IPv6 address as its /64 (`[2001:db8::1]:5000` →
    /// `2001:db8::/64`). Text that is no address is its own key.
    static func clientKey(_ address: String) -> String {
        let host = ClientIdentity.addressWithoutPort(address)
        guard host.contains(":") else { return host }
        var address = in6_addr()
        let zoneless = host.split(separator: "%", maxSplits: 1).first.map(String.init) ?? host
        guard inet_pton(AF_INET6, zoneless, &address) == 1 else { return host }
        withUnsafeMutableBytes(of: &address) { bytes in
            for index in 8..<16 { bytes[index] = 0 }
        }
        var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &text, socklen_t(text.count)) != nil else { return host }
        return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self) + "/64"
    }
}
