import Foundation

// Placeholder until the capture-store branch (https-b) lands with the real definitions.

public struct PinnedDomain: Sendable, Hashable {
    public var host: String
    public var reason: String
    public var evidence: String
    public var firstSeen: Date
    public var lastSeen: Date
    public var count: Int

    public init(host: String, reason: String, evidence: String, firstSeen: Date, lastSeen: Date, count: Int) {
        self.host = host
        self.reason = reason
        self.evidence = evidence
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.count = count
    }
}

public enum HandshakeOutcome: Sendable, Hashable {
    case completed
    case rejected(reason: String, evidence: String)
    case ambiguousEOF(evidence: String)
    case notAPinSignal
}

public protocol PinRegistry: Sendable {
    func pin(for host: String) -> PinnedDomain?
    func record(_ outcome: HandshakeOutcome, host: String)
}
