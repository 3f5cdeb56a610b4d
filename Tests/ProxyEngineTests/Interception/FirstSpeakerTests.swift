import XCTest
@testable import ProxyEngine

/// Who speaks first in a fresh CONNECT tunnel, as transcripts of events and the action each
/// one asks for: the client's bytes decide whenever they come, a silent client gets the origin
/// dialled and watched, and only the overall deadline relays an undecided tunnel.
final class FirstSpeakerTests: XCTestCase {
    private let hello = FirstBytes.tls(.init(serverName: "a.test", alpnProtocols: [], legacyVersion: 0x0303,
                                             supportedVersions: []))

    /// The usual case: the ClientHello follows the 200 at once; the origin is never dialled.
    func testClientSpeakingAtOnceDecides() {
        var speaker = FirstSpeaker()
        XCTAssertEqual(speaker.clientDecided(hello), .clientDecides(hello))
        XCTAssertEqual(speaker.quietPeriodEnded(clientBytes: 0), .none)
        XCTAssertEqual(speaker.deadlinePassed(clientBytes: 0, after: 30), .none)
    }

    /// A slow client (its hello 1.5 s after the 200): the origin is dialled after the quiet
    /// period and stays silent; the hello still decides, so the tunnel is intercepted.
    func testSlowClientStillDecidesAfterTheOriginWasDialled() {
        var speaker = FirstSpeaker()
        XCTAssertEqual(speaker.quietPeriodEnded(clientBytes: 0), .dialOrigin)
        XCTAssertEqual(speaker.originConnected(), .none)
        XCTAssertEqual(speaker.phase, .watching)
        XCTAssertEqual(speaker.clientDecided(hello), .clientDecides(hello))
        XCTAssertEqual(speaker.originSpoke(clientBytes: 0), .none, "decided already")
    }

    /// SMTP, SSH: the watched origin speaks before the client: relay, noted.
    func testOriginSpeakingFirstIsRelayed() {
        var speaker = FirstSpeaker()
        XCTAssertEqual(speaker.quietPeriodEnded(clientBytes: 0), .dialOrigin)
        _ = speaker.originConnected()
        XCTAssertEqual(speaker.originSpoke(clientBytes: 0), .relay(note: "relayed untouched: the server spoke first"))
        XCTAssertEqual(speaker.clientDecided(hello), .none)
    }

    /// A client that has sent part of its hello spoke first: the origin's bytes do not decide.
    func testClientPrefixBeatsALaterOriginBanner() {
        var speaker = FirstSpeaker()
        XCTAssertEqual(speaker.quietPeriodEnded(clientBytes: 0), .dialOrigin)
        _ = speaker.originConnected()
        XCTAssertEqual(speaker.originSpoke(clientBytes: 3), .none)
        XCTAssertEqual(speaker.clientDecided(hello), .clientDecides(hello))
    }

    /// A client that sent a prefix before the quiet period ended is not taken for silent.
    func testPrefixBeforeTheQuietPeriodMeansNoDial() {
        var speaker = FirstSpeaker()
        XCTAssertEqual(speaker.quietPeriodEnded(clientBytes: 1), .none)
        XCTAssertEqual(speaker.phase, .listening)
    }

    /// The origin cannot be reached (or closes without a word): the client is still waited for.
    func testUnreachableOriginKeepsWaitingForTheClient() {
        var speaker = FirstSpeaker()
        XCTAssertEqual(speaker.quietPeriodEnded(clientBytes: 0), .dialOrigin)
        XCTAssertEqual(speaker.originUnavailable(), .none)
        XCTAssertEqual(speaker.phase, .listening)
        XCTAssertEqual(speaker.clientDecided(.http), .clientDecides(.http))
    }

    /// Neither side says anything until the deadline: relayed, with a note that says so.
    func testSilenceOnBothSidesIsRelayedAtTheDeadline() {
        var speaker = FirstSpeaker()
        _ = speaker.quietPeriodEnded(clientBytes: 0)
        _ = speaker.originConnected()
        XCTAssertEqual(speaker.deadlinePassed(clientBytes: 0, after: 30),
                       .relay(note: "relayed untouched: neither side sent anything within 30 s"))
        XCTAssertEqual(speaker.clientDecided(hello), .none, "the deadline decided")
    }

    /// A stalled prefix: the deadline relays it and names how many bytes were held.
    func testStalledPrefixIsRelayedAtTheDeadlineWithANote() {
        var speaker = FirstSpeaker()
        XCTAssertEqual(speaker.deadlinePassed(clientBytes: 7, after: 30), .relay(
            note: "relayed untouched: the client's first 7 bytes were not a complete TLS ClientHello or HTTP request "
                + "line after 30 s"))
    }
}
