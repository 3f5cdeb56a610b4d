import ArgumentParser
import CaptureStore
import Foundation

/// `proxyapp run`'s limits on what the capture keeps (`RetentionPolicy`): the capture writer
/// removes the oldest flows past any of them as it goes.
struct RetentionOptions: ParsableArguments {
    @Option(name: .customLong("max-db-size"), help: ArgumentHelp(
        "Keep the capture (database and body files) under this size; oldest flows go first. 'off': no limit.",
        valueName: "size"))
    var maxSizeText = "2GiB"

    @Option(name: .customLong("max-flows"), help: ArgumentHelp(
        "Keep at most this many flows (marked ones not counted); oldest go first. 'off': no limit.",
        valueName: "count"))
    var maxFlowsText = "off"

    @Option(name: .customLong("max-age"), help: ArgumentHelp(
        "Remove flows older than this, e.g. 30d, 12h, 90m. 'off': keep them.", valueName: "duration"))
    var maxAgeText = "30d"

    @Flag(name: .customLong("keep-marked"), inversion: .prefixedNo,
          help: "Never remove marked flows (TUI m) to keep within the limits.")
    var keepMarked = true

    func validate() throws {
        _ = try policy()
    }

    /// The limits as given.
    func policy() throws -> RetentionPolicy {
        try RetentionPolicy(maxFlows: Self.parseCount(maxFlowsText), maxAge: Self.parseAge(maxAgeText),
                            maxBytes: Self.parseSize(maxSizeText), keepMarked: keepMarked)
    }

    /// The banner line: `Keeping: up to 2.0 GiB, 30d (oldest go first; marked kept)`.
    /// In a shared PostgreSQL store the size limit is the database's business (`shared`).
    static func bannerLine(_ policy: RetentionPolicy, shared: Bool = false) -> String {
        guard shared else { return "Keeping: " + summary(policy) }
        var applied = policy
        applied.maxBytes = nil
        let note = policy.maxBytes == nil ? "" : " (--max-db-size is not applied to a PostgreSQL store)"
        return "Keeping: " + summary(applied) + note
    }

    /// What the capture keeps, for the banner and the TUI's `i` screen.
    static func summary(_ policy: RetentionPolicy) -> String {
        guard !policy.keepsEverything else { return "every flow (no --max-db-size, --max-flows or --max-age)" }
        var limits: [String] = []
        if let bytes = policy.maxBytes { limits.append("up to \(ByteCount.format(bytes))") }
        if let flows = policy.maxFlows { limits.append("\(flows) flows") }
        if let age = policy.maxAge { limits.append("\(DurationArgument(seconds: Int(age)))") }
        return limits.joined(separator: ", ") + (policy.keepMarked ? " (oldest go first; marked kept)" : " (oldest go first)")
    }

    private static func isOff(_ text: String) -> Bool {
        ["off", "none"].contains(text.trimmingCharacters(in: .whitespaces).lowercased())
    }

    static func parseSize(_ text: String) throws -> Int64? {
        if isOff(text) { return nil }
        guard let size = ByteCount(argument: text), size.bytes >= 1 << 20 else {
            throw ValidationError("--max-db-size takes a size of at least 1MiB, such as 500MiB or 2GiB, or 'off'; got '\(text)'.")
        }
        return Int64(size.bytes)
    }

    static func parseCount(_ text: String) throws -> Int? {
        if isOff(text) { return nil }
        guard let count = Int(text.trimmingCharacters(in: .whitespaces)), count >= 1 else {
            throw ValidationError("--max-flows takes a number of flows of at least 1, or 'off'; got '\(text)'.")
        }
        return count
    }

    static func parseAge(_ text: String) throws -> TimeInterval? {
        if isOff(text) { return nil }
        guard let age = DurationArgument(argument: text) else {
            throw ValidationError("--max-age takes a duration such as 30d, 12h or 90m, or 'off'; got '\(text)'.")
        }
        return age.timeInterval
    }
}
