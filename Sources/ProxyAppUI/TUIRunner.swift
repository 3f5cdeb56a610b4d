import Dispatch
import Foundation
import NIOConcurrencyHelpers
import TerminalUI

/// Asks a running TUI loop to end (a signal in `proxyapp run`); safe from any thread.
public final class TUIStopSignal: Sendable {
    private let requested = NIOLockedValueBox(false)

    public init() {}

    public func request() { requested.withLockedValue { $0 = true } }
    public var isRequested: Bool { requested.withLockedValue { $0 } }
}

/// The terminal loop: reads keys, lets the controller fold in new data, and writes only the
/// cells that changed since the last frame (plus what the controller asks to send besides it: a
/// clipboard sequence).
///
/// Keys are handled against the frame on screen: every key read in one turn goes to the
/// controller before the next `tick`, so flows arriving meanwhile cannot move what Enter opens,
/// and the controller queues keys that need a flow still loading (`Enter 3`), never drops them.
///
/// One thread, no callbacks: each turn waits at most `turnMilliseconds` for input, so new flows
/// (the feed polls every 250 ms) and background results show up within a turn, and a key is
/// answered with a frame in the same turn. The terminal size is read every turn (an `ioctl`),
/// so a resize redraws on the next turn whether or not SIGWINCH reaches us; a size change
/// repaints the whole screen. The loop also ends when the terminal hangs up.
public enum TUIRunner {
    public static let turnMilliseconds: Int32 = 40
    /// How long a lone ESC waits for the rest of an escape sequence before it counts as Escape.
    public static let escapeMilliseconds: Int32 = 30

    public static func run(_ controller: TUIController, session: TerminalSession, stop: TUIStopSignal = TUIStopSignal()) {
        var decoder = KeyDecoder()
        var shown: ScreenGrid?
        while !controller.wantsQuit, !stop.isRequested {
            let (width, height) = session.size()
            let size = ScreenSize(width: width, height: height)
            if let previous = shown, previous.width != width || previous.height != height {
                shown = nil  // repaint everything at the new size
            }
            controller.resize(size)
            controller.tick()
            let frame = controller.render()
            if frame != shown {
                session.write(ScreenDiff.bytes(from: shown, to: frame))
                shown = frame
            }
            let output = controller.takeTerminalOutput()  // an OSC 52 clipboard sequence
            if !output.isEmpty { session.write(output) }
            if let text = controller.takePendingEdit() {  // `R`: the terminal goes to the editor meanwhile
                session.suspend()
                let result = ExternalEditor.edit(text)
                session.resume()
                shown = nil
                controller.editorFinished(result)
                continue
            }
            guard let bytes = session.read(timeoutMilliseconds: decoder.hasPending ? escapeMilliseconds : turnMilliseconds) else {
                return  // the terminal is gone: nobody is left to look at the screen
            }
            let keys = bytes.isEmpty ? (decoder.hasPending ? decoder.flushPendingEscape() : []) : decoder.feed(bytes)
            for key in keys {
                if key == .control("l") {
                    shown = nil  // Ctrl-L: the screen was scribbled on; repaint all of it
                } else {
                    controller.handle(key)
                }
            }
        }
    }
}
