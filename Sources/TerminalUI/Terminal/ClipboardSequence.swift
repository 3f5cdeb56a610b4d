import Foundation

/// The OSC 52 escape sequence that asks the terminal to put text on the system clipboard:
/// `ESC ] 52 ; c ; <base64> BEL`.
///
/// It travels in the terminal's own byte stream, so it works over SSH and through tmux (with
/// `set -g set-clipboard on`) where no clipboard tool on this machine could reach the user's.
/// The payload is base64, so whatever the copied text holds, no byte of it reaches the terminal
/// raw. Terminals refuse or truncate large payloads: `limit` bounds what is sent.
public enum ClipboardSequence {
    /// The most bytes copied in one sequence (before base64: about 87 KiB on the wire).
    public static let limit = 64 * 1024

    /// The sequence for `bytes`, or nil when they are over `limit`.
    public static func sequence(for bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count <= limit else { return nil }
        return Array("\u{1B}]52;c;".utf8) + Array(Data(bytes).base64EncodedString().utf8) + [0x07]
    }
}
