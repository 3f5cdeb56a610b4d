import Dispatch
import Foundation
import NIOConcurrencyHelpers
import NIOCore
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Looks names up with c-ares on one thread of its own, every query in flight at once: a name
/// whose servers never answer holds no thread, so no number of them delays another name.
///
/// c-ares 1.18 has no event thread and its channels are not thread-safe, so this thread owns
/// them and runs the loop: take new lookups from the inbox, `poll` the sockets c-ares reported
/// (`AresChannel.State.interest`) and the `WakePipe` for at most c-ares's next timeout, let
/// c-ares process what is ready, repeat. Other threads only touch the inbox (under its lock)
/// and the pipe.
///
/// Names in `/etc/hosts` are answered from `HostsFile` (read again when it changes) without
/// c-ares. New lookups go to a new channel when resolv.conf changed (`FileChangeWatch`) and after every
/// `lookupsPerChannel` lookups; an old channel is polled until its last query is answered,
/// then destroyed. The second is for spoofing: c-ares 1.18 keeps one UDP socket (one source
/// port) per server while any query is pending, so under steady load, or with one query kept
/// waiting on purpose, every query would leave from the same port and an off-path forger would
/// only have the 16-bit query ID to guess. A fresh channel opens fresh sockets. At most
/// `maxDrainingChannels` old channels are kept (each holds a socket per server it asked), so
/// names that never answer cannot make it hold many descriptors: past that, the current
/// channel stays until one drains.
final class AresResolverThread: NameLookupBackend {
    typealias Answer = @Sendable (Result<[SocketAddress], NameLookupError>) -> Void

    /// How the channels ask, and how often resolv.conf is looked at.
    struct Configuration: Sendable {
        var channel = AresChannel.Configuration()
        /// The hosts file; nil is the system's (`/etc/hosts`).
        var hostsPath: String?
        /// The least time between two looks at resolv.conf and the hosts file (only when
        /// lookups come).
        var fileCheckInterval: TimeAmount = .seconds(2)
        /// Lookups sent with one channel (so from the same sockets) before a fresh one.
        var lookupsPerChannel = 100
        /// Old channels waiting for their last answers, at most.
        var maxDrainingChannels = 8
    }

    /// Lookups handed over by other threads; `stopping` ends the loop.
    private struct Inbox {
        var lookups: [(name: String, answer: Answer)] = []
        var stopping = false
    }

    private let inbox: NIOLockedValueBox<Inbox>
    private let wake: WakePipe
    private let stopped = DispatchSemaphore(value: 0)

    /// Makes the first channel here (so a bad configuration is an error of the caller's) and
    /// starts the thread.
    init(configuration: Configuration) throws {
        let channel = try AresChannel(configuration.channel)
        let wake = try WakePipe()
        let inbox = NIOLockedValueBox(Inbox())
        self.wake = wake
        self.inbox = inbox
        let loop = Loop(configuration: configuration, channel: channel, inbox: inbox, wake: wake)
        let stopped = self.stopped
        let thread = Thread {
            loop.run()
            stopped.signal()
        }
        thread.name = "proxyapp-dns"
        thread.start()
    }

    deinit {
        shutdown()
    }

    func lookUp(_ name: String, answer: @escaping Answer) {
        let accepted = inbox.withLockedValue { inbox -> Bool in
            guard !inbox.stopping else { return false }
            inbox.lookups.append((name, answer))
            // One byte wakes the loop for every lookup queued until it drains the inbox; the
            // write happens under the lock, so never after the loop closed the pipe.
            if inbox.lookups.count == 1 { wake.signal() }
            return true
        }
        if !accepted {
            answer(.failure(.failed(reason: "the proxy is shutting down")))
        }
    }

    /// Stops the loop: c-ares answers its queries "shutting down" (nobody waits for them any
    /// more: `LookupFlights` answered its waiters first) and closes its sockets, then the thread
    /// ends. Waits for that at most `stopWait` (the thread only has to leave `poll`).
    func shutdown() {
        let first = inbox.withLockedValue { inbox -> Bool in
            guard !inbox.stopping else { return false }
            inbox.stopping = true
            wake.signal()
            return true
        }
        if first {
            _ = waitUntilStopped(timeout: Self.stopWait)
        }
    }

    /// How long `shutdown()` waits for the thread to end.
    static let stopWait: DispatchTimeInterval = .milliseconds(500)

    /// True once the thread has ended (waits at most `timeout`).
    func waitUntilStopped(timeout: DispatchTimeInterval) -> Bool {
        guard stopped.wait(timeout: .now() + timeout) == .success else { return false }
        stopped.signal()  // stays signalled for the next caller
        return true
    }

    /// The loop's own state, touched only on the resolver's thread (hence `@unchecked`): the
    /// channels, the hosts table and the watches of both files. The inbox and the pipe are shared, as described above.
    private final class Loop: @unchecked Sendable {
        private let configuration: Configuration
        private let inbox: NIOLockedValueBox<Inbox>
        private let wake: WakePipe
        /// The channel new lookups go to.
        private var current: AresChannel
        /// Lookups started with `current`.
        private var lookupsOnCurrent = 0
        /// resolv.conf changed since `current` was made.
        private var reloadDue = false
        /// Channels replaced by a fresh one, until their last query is answered.
        private var draining: [AresChannel] = []
        private var resolvConf: FileChangeWatch
        private var hostsWatch: FileChangeWatch
        private var hosts: HostsFile

        init(configuration: Configuration, channel: AresChannel, inbox: NIOLockedValueBox<Inbox>, wake: WakePipe) {
            self.configuration = configuration
            self.inbox = inbox
            self.wake = wake
            current = channel
            resolvConf = FileChangeWatch(path: configuration.channel.resolvConfPath ?? "/etc/resolv.conf",
                                         interval: configuration.fileCheckInterval)
            hostsWatch = FileChangeWatch(path: configuration.hostsPath ?? "/etc/hosts", interval: configuration.fileCheckInterval)
            hosts = HostsFile.load(path: hostsWatch.path)
        }

        func run() {
            var ready: [pollfd] = []
            var owners: [AresChannel] = []
            while true {
                let (lookups, stopping) = inbox.withLockedValue { inbox in
                    defer { inbox.lookups.removeAll(keepingCapacity: true) }
                    return (inbox.lookups, inbox.stopping)
                }
                if stopping {
                    for (_, answer) in lookups { answer(.failure(.failed(reason: "the proxy is shutting down"))) }
                    break
                }
                start(lookups)
                draining.removeAll { channel in
                    guard channel.state.pending == 0 else { return false }
                    channel.destroy()
                    return true
                }
                waitAndProcess(&ready, &owners)
            }
            current.destroy()
            for channel in draining { channel.destroy() }
            wake.close()
        }

        /// Answers names the hosts file lists, and hands the others to c-ares (on a fresh
        /// channel when one is due).
        private func start(_ lookups: [(name: String, answer: Answer)]) {
            guard !lookups.isEmpty else { return }
            reloadDue = resolvConf.changed() || reloadDue
            if hostsWatch.changed() {
                hosts = HostsFile.load(path: hostsWatch.path)
            }
            for (name, answer) in lookups {
                if let addresses = hosts.addresses(of: name) {
                    answer(.success(addresses))
                    continue
                }
                if reloadDue || lookupsOnCurrent >= configuration.lookupsPerChannel {
                    replaceChannel()
                }
                lookupsOnCurrent += 1
                current.lookUp(name) { answer($0) }
            }
        }

        /// Waits in `poll` for the wake-up pipe, a socket c-ares watches, or c-ares's next
        /// timeout, then lets each channel process what is ready (or what timed out).
        /// `ready` and `owners` are reused buffers: the poll set and each socket's channel.
        private func waitAndProcess(_ ready: inout [pollfd], _ owners: inout [AresChannel]) {
            let channels = [current] + draining
            ready.removeAll(keepingCapacity: true)
            owners.removeAll(keepingCapacity: true)
            ready.append(pollfd(fd: wake.readEnd, events: Int16(POLLIN), revents: 0))
            var timeout: Int32 = -1
            for channel in channels {
                for (socket, interest) in channel.state.interest {
                    let events = (interest.read ? Int16(POLLIN) : 0) | (interest.write ? Int16(POLLOUT) : 0)
                    ready.append(pollfd(fd: socket, events: events, revents: 0))
                    owners.append(channel)
                }
                if let next = channel.millisecondsUntilTimeout() {
                    timeout = timeout < 0 ? next : min(timeout, next)
                }
            }
            guard poll(&ready, nfds_t(ready.count), timeout) >= 0 || errno == EINTR else {
                // Cannot happen with valid descriptors; back off instead of spinning.
                usleep(10_000)
                return
            }
            if ready[0].revents != 0 { wake.drain() }
            var served = Set<ObjectIdentifier>()
            for index in ready.indices.dropFirst() where ready[index].revents != 0 {
                let revents = Int32(ready[index].revents)
                let channel = owners[index - 1]
                channel.process(ready[index].fd, read: revents & Int32(POLLIN | POLLERR | POLLHUP) != 0,
                                write: revents & Int32(POLLOUT) != 0)
                served.insert(ObjectIdentifier(channel))
            }
            for channel in channels where !served.contains(ObjectIdentifier(channel)) {
                channel.processTimeouts()
            }
        }

        /// A fresh channel for new lookups (resolv.conf read again, new sockets); if it cannot
        /// be made now, or enough old ones are still draining, the current one stays (and a
        /// due reload is tried again with the next lookup).
        private func replaceChannel() {
            lookupsOnCurrent = 0
            guard draining.count < configuration.maxDrainingChannels,
                  let fresh = try? AresChannel(configuration.channel) else { return }
            reloadDue = false
            draining.append(current)
            current = fresh
        }
    }
}
