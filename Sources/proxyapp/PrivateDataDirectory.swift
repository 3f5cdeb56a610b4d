import Foundation
import ProxyTLS

extension DataDirectoryOptions {
    /// The files of the data directory that hold captured data (the capture, SQLite's WAL and
    /// shared-memory files, the TUI's log): tightened to 0600 at start when looser.
    static let capturedDataFileNames = ["traffic.sqlite", "traffic.sqlite-wal", "traffic.sqlite-shm", "proxyapp.log"]

    /// Creates the data directory for a command that writes into it (`run`, `import`, `tui`),
    /// private to its owner: 0700, and the capture files in it 0600. A capture holds
    /// `Authorization` headers, cookies and decrypted bodies, and other local accounts could
    /// read a 0644 file in a 0755 directory. An existing directory or file with looser modes
    /// (an older version, a permissive umask) is tightened, and the returned line says so
    /// (nil when nothing changed); callers print it once.
    ///
    /// A directory others may create files in (another user's group- or world-writable one, a
    /// sticky shared one such as `/tmp`) is refused, and so is a capture file, log or `ca`
    /// directory someone else put there: SQLite writes into an existing `-wal` whoever owns it.
    func preparePrivateDirectory() throws -> String? {
        let directory = PrivateDirectory(url: self.directory)
        let tightenedDirectory: PrivateDirectory.Tightened?
        do {
            tightenedDirectory = try directory.prepare()
        } catch let shared as PrivateDirectory.SharedDirectoryError {
            throw CLIError("cannot keep captured traffic in \(shared.path): \(shared). Pass a --data-dir of your own (the default is ~/.proxyapp).")
        } catch {
            throw CLIError("cannot create the data directory \(self.directory.path): \(error). Pass a writable --data-dir.")
        }
        if let foreign = directory.foreignEntries(named: Self.capturedDataFileNames + ["ca"]).first {
            throw CLIError("\(foreign.path) belongs to another user (uid \(foreign.owner)), who could read the captured traffic "
                           + "written into it. Remove it, or pass another --data-dir.")
        }
        let tightened = [tightenedDirectory].compactMap { $0 } + directory.restrictFiles(named: Self.capturedDataFileNames)
        return Self.tightenedLine(tightened)
    }

    /// "data directory: tightened permissions (…): /home/a/.proxyapp 755 → 700, …"
    static func tightenedLine(_ changes: [PrivateDirectory.Tightened]) -> String? {
        guard !changes.isEmpty else { return nil }
        return "data directory: tightened permissions (other local users could read captured traffic): "
            + changes.map(\.description).joined(separator: ", ")
    }
}
