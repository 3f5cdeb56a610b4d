/// Decides whether a header, query parameter or form field name looks like it holds a secret.
///
/// Deliberately broad: a shared HAR losing a harmless value costs little, leaking a token costs
/// a lot. A name matches when it contains (ignoring case) one of `token`, `key`, `secret`,
/// `password`, `passwd`, `session`, `auth`, `credential` or `signature`, or is exactly `sig`.
enum SecretName {
    private static let fragments = ["token", "key", "secret", "password", "passwd", "session", "auth",
                                    "credential", "signature"]

    static func matches(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return lowered == "sig" || fragments.contains { lowered.contains($0) }
    }
}
