import CXXHash
import Foundation

/// The body files stored most recently, by the first bytes of the body each holds, so that a
/// spool receiving the same body again can check it against that file instead of writing a copy
/// (`BodyFileSpool`).
///
/// The same large body captured again is the common case in development: the same bundle, image
/// or download fetched on every reload. Writing it to a spool file, hashing it and then comparing
/// the whole file with its stored twin took about half of the proxy's CPU for such a download.
/// A spool whose first `prefixSize` bytes match an entry here links the stored file instead and
/// compares each block with it as it arrives; only a body that turns out to differ is written.
///
/// Keys are the XXH3-64 of the first `prefixSize` bytes: a key only suggests a twin, the bytes
/// decide. At most `capacity` entries; the oldest goes first. Names come only from the store
/// (`BodyFileSpool.claim()`), never from the network.
///
/// A spool that wrote its body is recorded as soon as it finishes, under its spool file, not
/// only once the writer has claimed it (up to 100 ms later, `CaptureWriter.Limits.maxBatchDelay`):
/// the same download repeated at once finds it. A link to that file holds the same inode after
/// the claim renames it; one made after the rename fails, and the stored name is tried.
final class BodyTwinIndex: @unchecked Sendable {
    /// Bytes of a body's start that make its key.
    static let prefixSize = 64 << 10
    /// Entries kept (about 100 bytes each).
    static let capacity = 512

    private let lock = NSLock()
    /// A file holding a body, and the name the body has (or will have) in the store.
    struct Twin: Equatable {
        var name: String
        /// Where to link it: a finished spool's file, or nil for the stored file of `name`.
        var file: String?
    }

    private var names: [UInt64: Twin] = [:]
    /// The keys of `names` in the order they were recorded, oldest first.
    private var order: [UInt64] = []

    /// The key of a body starting with `prefix` (its first `prefixSize` bytes).
    static func key(_ prefix: UnsafeRawBufferPointer) -> UInt64 {
        XXH3_64bits(prefix.baseAddress, prefix.count)
    }

    /// The last body recorded with `key`, if any.
    func twin(for key: UInt64) -> Twin? {
        lock.withLock { names[key] }
    }

    /// Records that the stored file `name` (or the spool file `file`, of the body to be stored
    /// as `name`) holds a body whose start has `key`.
    func record(_ name: String, file: String? = nil, for key: UInt64) {
        lock.withLock {
            if names.updateValue(Twin(name: name, file: file), forKey: key) != nil { return }
            order.append(key)
            if order.count > Self.capacity {
                names[order.removeFirst()] = nil
            }
        }
    }

    /// Forgets `key` when it still names `name` (its file is gone or holds other bytes).
    func forget(_ key: UInt64, naming name: String) {
        lock.withLock {
            guard names[key]?.name == name else { return }
            names[key] = nil
            order.removeAll { $0 == key }
        }
    }

    var count: Int { lock.withLock { names.count } }
}
