/// POSIX shell quoting: one single-quoted word per argument, so no byte of a header or body can
/// be read by the shell as syntax (`$`, backquotes, `!`, newlines all stay literal).
enum ShellQuoting {
    /// `it's` → `'it'\''s'`.
    static func quote(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
    }

    /// Words that need no quotes (`curl`, `--http1.1`) are left bare for readability.
    static func word(_ text: String) -> String {
        let bare = !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_./:=@%+,".unicodeScalars.contains(scalar))
        }
        return bare ? text : quote(text)
    }
}
