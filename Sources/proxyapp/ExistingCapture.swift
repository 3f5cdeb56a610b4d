import CaptureStore
import Foundation

extension DataDirectoryOptions {
    /// Opens the capture database of the data directory for a command that reads (or edits) an
    /// existing capture: `proxyapp flows`, `proxyapp pins`. A missing file is an error naming
    /// the fix; nothing is ever created.
    ///
    /// - Parameter forWriting: open read-write (the file is migrated to this build's schema, as
    ///   the proxy would); otherwise read-only, safe while a proxy writes.
    func openExistingCapture(forWriting: Bool = false) throws -> TrafficRepository {
        let path = databasePath
        guard FileManager.default.fileExists(atPath: path) else {
            throw CLIError(
                "no capture database at \(path). Start the proxy with `proxyapp run` first, or point --data-dir / PROXYAPP_HOME at another capture.")
        }
        let database = forWriting ? try TrafficDatabase(path: path) : try TrafficDatabase.openReadOnly(path: path)
        return TrafficRepository(database: database)
    }
}
