import NIOCore
import Rules

/// Tells the resolver's thread when a configuration file changed (resolv.conf on a new network
/// or VPN, `/etc/hosts` edited), so new lookups follow it as glibc's resolver does: c-ares
/// reads resolv.conf only when a channel is made. One `stat` (`FileSignature`) at most every
/// `interval`, and only when lookups come.
struct FileChangeWatch {
    let path: String
    private let interval: TimeAmount
    private var last: FileSignature?
    private var checked: NIODeadline

    init(path: String, interval: TimeAmount, now: NIODeadline = .now()) {
        self.path = path
        self.interval = interval
        last = FileSignature(path: path)
        checked = now
    }

    /// True when the file is different (or appeared, or went) since the last look, if that
    /// look is `interval` ago.
    mutating func changed(now: NIODeadline = .now()) -> Bool {
        guard now - checked >= interval else { return false }
        checked = now
        let current = FileSignature(path: path)
        defer { last = current }
        return current != last
    }
}
