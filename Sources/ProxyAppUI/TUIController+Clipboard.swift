import CaptureStore
import Foundation
import ProxyModel
import TerminalUI

/// `y` then a key: a flow's URL, curl command, response body or raw request on the user's
/// clipboard, through the terminal (OSC 52), so it works over SSH and in tmux. The controller
/// queues the sequence; the runner writes it after the frame.
extension TUIController {
    static let copyChoices = "u URL  c curl  b response body  r raw request  Esc cancels"

    /// The key after `y`: loads the flow off the UI thread and copies what it names.
    func copy(_ key: Key, of id: Int64) {
        guard let kind = ClipboardText.Kind(key: key) else {
            if key == .escape || key == .control("c") || key == .control("g") {
                message = StatusMessage(.info, "cancelled")
            } else {
                message = StatusMessage(.error, "y \(key.name): no such copy key — \(Self.copyChoices)")
            }
            return
        }
        let repository = repository
        worker.perform("cannot copy flow #\(id)") {
            guard let flow = try repository.flow(id: id) else {
                return [.message(StatusMessage(.error, "flow #\(id) is no longer in the capture"))]
            }
            switch ClipboardText.make(kind, of: flow) {
            case .success(let copy): return [.clipboard(copy.bytes, what: copy.what)]
            case .failure(let refusal): return [.message(StatusMessage(.error, refusal.reason))]
            }
        }
    }

    /// Queues the OSC 52 sequence for `bytes`, or says they are too big for one.
    func copied(_ bytes: [UInt8], what: String) {
        let size = "\(NumberText.grouped(bytes.count)) bytes"
        guard let sequence = ClipboardSequence.sequence(for: bytes) else {
            let limit = "\(ClipboardSequence.limit / 1024) KiB"
            message = StatusMessage(.error, "\(what) is \(size): too big for the clipboard (at most \(limit)); c saves curl to a file, e exports HAR")
            return
        }
        terminalOutput += sequence
        message = StatusMessage(.info, "copied \(what) to the clipboard (\(size), through the terminal: OSC 52)")
    }
}
