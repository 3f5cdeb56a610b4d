/// `--auth-file`: the users and bcrypt password hashes of an htpasswd file (`htpasswd -B`), so
/// passwords need not be typed on a command line (where `ps` shows them).
///
/// One `user:hash` per line; blank lines and `#` comments are skipped. Only bcrypt (`$2y$`,
/// `$2b$`, `$2a$`) is accepted: MD5 (`$apr1$`), SHA-1 (`{SHA}`), crypt and plain text are weak
/// and refused by line, with the command that makes a bcrypt entry. A cost above 16 is refused
/// too: each first login would keep a thread busy for seconds.
public enum PasswordFile {
    public struct Entry: Sendable, Hashable {
        public var user: String
        public var hash: String
        /// 1-based.
        public var line: Int
    }

    /// Why the file cannot be used, naming the line and the fix.
    public struct Problem: Error, Sendable, Hashable, CustomStringConvertible {
        public var line: Int?
        public var reason: String
        public var description: String { line.map { "line \($0): \(reason)" } ?? reason }
    }

    /// Largest file read, and largest bcrypt cost accepted.
    public static let maximumBytes = 1 << 20
    public static let maximumCost = 16

    public static func parse(_ text: String) -> Result<[Entry], Problem> {
        guard text.utf8.count <= maximumBytes else {
            return .failure(Problem(line: nil, reason: "the file is larger than 1 MiB: is it an htpasswd file?"))
        }
        var entries: [Entry] = []
        var firstLine: [String: Int] = [:]
        // "\r\n" is one Character in Swift: split on both (Windows editors write CRLF).
        let lines = text.split(omittingEmptySubsequences: false) { $0 == "\n" || $0 == "\r\n" }
        for (index, raw) in lines.enumerated() {
            let number = index + 1
            let line = raw.hasSuffix("\r") ? raw.dropLast() : raw
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            guard let colon = line.firstIndex(of: ":") else {
                return .failure(Problem(line: number, reason: "no ':' between user name and hash (htpasswd writes USER:HASH)"))
            }
            let user = String(line[..<colon])
            let hash = String(line[line.index(after: colon)...]).trimmingTrailingSpaces()
            guard !user.isEmpty, user.utf8.count <= 255,
                  !user.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
                return .failure(Problem(line: number, reason: "the user name is empty, longer than 255 bytes or holds a control character"))
            }
            if let problem = problem(with: hash, user: user) {
                return .failure(Problem(line: number, reason: problem))
            }
            if let earlier = firstLine[user] {
                return .failure(Problem(line: number, reason: "user '\(user)' is also on line \(earlier): keep one"))
            }
            firstLine[user] = number
            entries.append(Entry(user: user, hash: hash, line: number))
        }
        guard !entries.isEmpty else {
            return .failure(Problem(line: nil, reason: "the file has no users: add one with htpasswd -B FILE USER"))
        }
        return .success(entries)
    }

    /// What is wrong with `hash` as a bcrypt hash, in words, or nil.
    static func problem(with hash: String, user: String) -> String? {
        let fix = "make a bcrypt entry with: htpasswd -B FILE \(user)"
        if hash.hasPrefix("$apr1$") { return "user '\(user)' has an MD5 ($apr1$) hash, which is weak: \(fix)" }
        if hash.hasPrefix("{SHA}") { return "user '\(user)' has a SHA-1 ({SHA}) hash, which is weak: \(fix)" }
        let bytes = Array(hash.utf8)
        guard bytes.count == 60, bytes[0] == UInt8(ascii: "$"), bytes[1] == UInt8(ascii: "2"),
              [UInt8(ascii: "a"), UInt8(ascii: "b"), UInt8(ascii: "y")].contains(bytes[2]), bytes[3] == UInt8(ascii: "$"),
              bytes[6] == UInt8(ascii: "$"), let cost = Int(String(decoding: bytes[4..<6], as: UTF8.self)),
              bytes[7...].allSatisfy(isBcryptAlphabet) else {
            return "user '\(user)' has no bcrypt hash (only $2y$/$2b$ entries are accepted): \(fix)"
        }
        guard (4...maximumCost).contains(cost) else {
            return "user '\(user)' has bcrypt cost \(cost); use 4 to \(maximumCost) (each login is checked at that cost): "
                + "htpasswd -B -C 10 FILE \(user)"
        }
        return nil
    }

    private static func isBcryptAlphabet(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
             UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var text = Substring(self)
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
