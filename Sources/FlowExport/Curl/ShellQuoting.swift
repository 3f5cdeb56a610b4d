import ProxyModel

/// POSIX shell quoting for commands meant to be pasted into an interactive shell: one word per
/// argument, no byte of a header, URL or body read by the shell as syntax (`$`, backquotes, `!`
/// stay literal inside single quotes), and no control byte printed raw.
///
/// A raw control byte is unsafe even inside quotes: pasted, `0x03` makes the terminal send
/// SIGINT and the shell then runs the rest of the paste as commands; ESC starts terminal escape
/// sequences when the command is printed; a tab triggers completion; a CR is turned into a LF.
/// So C0 controls, DEL, C1 controls and bidi overrides are written outside the quotes as `"$(printf '\NNN')"`
/// (octal, POSIX `printf`). A command substitution drops trailing newlines, so a LF is written
/// as `"$proxyapp_nl"`, a variable the command defines first (`newlineDefinition`).
enum ShellQuoting {
    /// The variable that holds a LF for `"$proxyapp_nl"`.
    static let newlineVariable = "proxyapp_nl"

    /// Shell text defining `newlineVariable` without a raw newline; put it (with `; `) before a
    /// command whose arguments contain a LF.
    static let newlineDefinition = #"proxyapp_nl="$(printf '\012.')"; proxyapp_nl="${proxyapp_nl%.}""#

    /// `it's` → `'it'\''s'`; `a<ESC>b` → `'a'"$(printf '\033')"'b'`.
    static func quote(_ text: String) -> String {
        guard !text.isEmpty else { return "''" }
        var result = ""
        var quoted = ""
        var controls: [UInt8] = []
        func flushQuoted() {
            guard !quoted.isEmpty else { return }
            result += "'" + quoted.replacingOccurrences(of: "'", with: #"'\''"#) + "'"
            quoted = ""
        }
        func flushControls() {
            guard !controls.isEmpty else { return }
            result += #""$(printf '"# + controls.map(octalEscape).joined() + #"')""#
            controls = []
        }
        for scalar in text.unicodeScalars {
            if scalar == "\n" {
                flushQuoted()
                flushControls()
                result += "\"$\(newlineVariable)\""
            } else if isControl(scalar) {
                flushQuoted()
                controls += Array(String(scalar).utf8)
            } else {
                flushControls()
                quoted.unicodeScalars.append(scalar)
            }
        }
        flushQuoted()
        flushControls()
        return result
    }

    /// Words that need no quotes (`curl`, `--http1.1`) are left bare for readability.
    static func word(_ text: String) -> String {
        let bare = !text.isEmpty && text.unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || "-_./:=@%+,".unicodeScalars.contains(scalar))
        }
        return bare ? text : quote(text)
    }

    /// Text for a `#` comment line: control characters shown as `\NNN` so none ends the comment
    /// or reaches the terminal.
    static func commentText(_ text: String) -> String {
        var result = ""
        for scalar in text.unicodeScalars {
            if isControl(scalar) {
                result += String(scalar).utf8.map(octalEscape).joined()
            } else {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// C0 controls (tab, CR and LF included), DEL, C1 controls and bidi overrides and isolates
    /// (`TerminalText.isUnsafe`: a U+202E inside quotes would make the command read otherwise
    /// than it runs).
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        TerminalText.isUnsafe(scalar)
    }

    private static func octalEscape(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 8)
        return "\\" + String(repeating: "0", count: 3 - digits.count) + digits
    }
}
