import Foundation
import NIOCore

/// `getaddrinfo` on a few threads of its own, for the names only the system's NSS modules
/// know: mDNS `.local` names (RFC 6762, answered by nss-mdns/Avahi), which c-ares cannot ask.
///
/// `getaddrinfo` cannot be interrupted, so a name that never answers holds a thread for the
/// system's timeout: that is why only `.local` names come here. At worst, slow `.local` names
/// delay other `.local` names; DNS (`AresResolverThread`), map-local reads and rewrites never
/// wait for them. At most `maxQueued` names wait for a thread; past it a lookup fails at once.
final class SystemNameLookup: NameLookupBackend, @unchecked Sendable {
    private struct Job {
        var name: String
        var answer: @Sendable (Result<[SocketAddress], NameLookupError>) -> Void
    }

    private let condition = NSCondition()
    private var queue: [Job] = []
    private var stopped = false
    private let maxQueued: Int

    init(threads: Int = 2, maxQueued: Int = 64) {
        self.maxQueued = maxQueued
        for index in 0..<max(threads, 1) {
            let thread = Thread { [self] in work() }
            thread.name = "proxyapp-mdns-\(index)"
            thread.start()
        }
    }

    func lookUp(_ name: String, answer: @escaping @Sendable (Result<[SocketAddress], NameLookupError>) -> Void) {
        condition.lock()
        guard !stopped, queue.count < maxQueued else {
            let stopping = stopped
            condition.unlock()
            answer(.failure(.failed(reason: stopping ? "the proxy is shutting down"
                : "too many .local lookups waiting (\(maxQueued)); try again later")))
            return
        }
        queue.append(Job(name: name, answer: answer))
        condition.signal()
        condition.unlock()
    }

    /// Stops taking jobs; threads busy in `getaddrinfo` finish it and then end (nobody waits
    /// for them: the answer goes nowhere after `LookupFlights` shut down).
    func shutdown() {
        condition.lock()
        stopped = true
        queue.removeAll()
        condition.broadcast()
        condition.unlock()
    }

    private func work() {
        while true {
            condition.lock()
            while queue.isEmpty && !stopped { condition.wait() }
            if stopped {
                condition.unlock()
                return
            }
            let job = queue.removeFirst()
            condition.unlock()
            job.answer(Self.lookUp(job.name))
        }
    }

    /// The IPv4 and IPv6 addresses of `name` (port 0), or the system's reason in words.
    static func lookUp(_ name: String) -> Result<[SocketAddress], NameLookupError> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var result: UnsafeMutablePointer<addrinfo>?
        let code = getaddrinfo(name, nil, &hints, &result)
        guard code == 0, let first = result else {
            if code == EAI_AGAIN { return .failure(.noAnswer) }
            return .failure(.failed(reason: code == EAI_NONAME ? "no such name (mDNS / the system resolver)"
                : String(cString: gai_strerror(code))))
        }
        defer { freeaddrinfo(first) }
        var addresses: [SocketAddress] = []
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let info = cursor {
            if let address = info.pointee.ai_addr {
                switch info.pointee.ai_family {
                case AF_INET:
                    addresses.append(SocketAddress(address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { $0.pointee },
                                                   host: name))
                case AF_INET6:
                    addresses.append(SocketAddress(address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee },
                                                   host: name))
                default:
                    break
                }
            }
            cursor = info.pointee.ai_next
        }
        return addresses.isEmpty ? .failure(.failed(reason: "no IPv4 or IPv6 address")) : .success(addresses)
    }
}
