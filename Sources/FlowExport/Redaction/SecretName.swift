/// Decides whether a header, query parameter or form field name looks like it holds a secret.
///
/// Deliberately broad: a shared HAR losing a harmless value costs little, leaking a token costs
/// a lot. A name matches (ignoring case) when it
/// - contains `token`, `key`, `secret`, `password`, `passwd`, `session`, `auth`, `credential` or
///   `signature`;
/// - has a word (split at anything but letters and digits: `X-JWT`, `user[pass]`, `otp_code`)
///   that is `sig`, `pass`, `pwd`, `jwt` or `otp`, short names that as substrings would also hit
///   `passenger` or `design`;
/// - is exactly `code` (an OAuth authorization code): `country_code` or `status-code` are not.
enum SecretName {
    private static let fragments = ["token", "key", "secret", "password", "passwd", "session", "auth",
                                    "credential", "signature"]
    private static let words: Set<Substring> = ["sig", "pass", "pwd", "jwt", "otp"]
    private static let exactNames: Set<String> = ["code"]

    static func matches(_ name: String) -> Bool {
        let lowered = name.lowercased()
        return exactNames.contains(lowered)
            || fragments.contains { lowered.contains($0) }
            || lowered.split { !($0.isLetter || $0.isNumber) }.contains { words.contains($0) }
    }
}
