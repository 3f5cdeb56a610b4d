/// An optional part of a value kept behind a pointer: absent, it costs the pointer instead of
/// the part's whole size, and a copy of the value that holds it retains once instead of copying
/// the part's fields.
///
/// Why: `Flow` carried `ForwardedRequest?` (145 bytes) and `OriginResponse?` (97) inline though
/// only flows a rule changed have them, so every flow was 944 bytes before its headers and body
/// were counted, copied whole at each hand-off, and a capture backlog held them all (a queued
/// HTTPS flow with a 1 KiB body was ~2.8 KiB). Equality and hashing are the part's own.
public struct OutOfLine<Part: Hashable & Sendable>: Hashable, Sendable {
    private final class Box: Sendable {
        let part: Part

        init(_ part: Part) {
            self.part = part
        }
    }

    private var box: Box?

    public init(_ part: Part?) {
        box = part.map(Box.init)
    }

    /// The part, or nil; setting it stores a new box (parts are rare and set once or twice).
    public var part: Part? {
        get { box?.part }
        set { box = newValue.map(Box.init) }
    }

    public static func == (lhs: Self, rhs: Self) -> Bool {
        lhs.box === rhs.box || lhs.part == rhs.part
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(part)
    }
}
