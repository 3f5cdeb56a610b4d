import ProxyCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// This machine's interface addresses (`getifaddrs`): the ones a device on the LAN can use to
/// reach the proxy (Wi-Fi, Ethernet, a hotspot's bridge), and all of them for the guard that
/// keeps clients from elsewhere off this machine's own services.
public struct LocalInterfaceAddress: Hashable, Sendable {
    /// The interface's name (`wlan0`, `eth0`, `ap0`).
    public var interface: String
    public var address: IPAddressBytes
    /// The interface is up (`IFF_UP`).
    public var isUp: Bool
    public var isLoopbackInterface: Bool

    /// What a device on the network can type in: up, not loopback, not link-local (a
    /// link-local IPv6 address needs a zone a phone's settings cannot take).
    public var isUsableFromLAN: Bool {
        isUp && !isLoopbackInterface && !address.isLoopback && !address.isLinkLocal && !address.isUnspecified
    }

    public init(interface: String, address: IPAddressBytes, isUp: Bool, isLoopbackInterface: Bool) {
        self.interface = interface
        self.address = address
        self.isUp = isUp
        self.isLoopbackInterface = isLoopbackInterface
    }

    /// The address as a URL's host: IPv6 in brackets.
    public var urlHost: String { address.isIPv4 ? address.description : "[\(address)]" }
}

public enum LocalInterfaces {
    /// Every IPv4 and IPv6 address of every interface, in the system's order; empty when the
    /// system gives none.
    public static func all() -> [LocalInterfaceAddress] {
        var head: UnsafeMutablePointer<ifaddrs>?
        guard getifaddrs(&head) == 0, let first = head else { return [] }
        defer { freeifaddrs(head) }
        var result: [LocalInterfaceAddress] = []
        var cursor: UnsafeMutablePointer<ifaddrs>? = first
        while let entry = cursor {
            defer { cursor = entry.pointee.ifa_next }
            guard let socketAddress = entry.pointee.ifa_addr else { continue }
            var bytes: [UInt8]
            switch Int32(socketAddress.pointee.sa_family) {
            case AF_INET:
                bytes = socketAddress.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
                }
            case AF_INET6:
                bytes = socketAddress.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin6_addr) { Array($0) }
                }
            default:
                continue
            }
            guard let address = IPAddressBytes(bytes: bytes) else { continue }
            let flags = Int32(bitPattern: entry.pointee.ifa_flags)
            result.append(LocalInterfaceAddress(
                interface: String(cString: entry.pointee.ifa_name), address: address,
                isUp: flags & Int32(IFF_UP) != 0, isLoopbackInterface: flags & Int32(IFF_LOOPBACK) != 0))
        }
        return result
    }

    /// The addresses a device on the LAN can reach the proxy at, IPv4 first, each once.
    public static func usableFromLAN(_ addresses: [LocalInterfaceAddress] = all()) -> [LocalInterfaceAddress] {
        var seen = Set<IPAddressBytes>()
        let usable = addresses.filter { $0.isUsableFromLAN && seen.insert($0.address).inserted }
        return usable.filter(\.address.isIPv4) + usable.filter { !$0.address.isIPv4 }
    }
}
