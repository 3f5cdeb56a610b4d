import Dispatch
import NIOConcurrencyHelpers
import TerminalUI

/// `proxyapp tui`'s `ProxyInfo`, looked up once at start and again every `interval` on a queue of
/// its own: a proxy may start (or stop) on the data directory while the UI runs, and the lookup
/// reads files, which the UI thread must not wait for. The UI reads the last answer.
final class ProxyInfoWatch: @unchecked Sendable {
    private let box: NIOLockedValueBox<ProxyInfo>
    private let timer: any DispatchSourceTimer

    init(interval: DispatchTimeInterval = .seconds(2), lookup: @escaping @Sendable () -> ProxyInfo) {
        let box = NIOLockedValueBox(lookup())
        self.box = box
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "proxyapp.tui.proxy-info"))
        timer.schedule(deadline: .now() + interval, repeating: interval, leeway: .milliseconds(200))
        timer.setEventHandler {
            let info = lookup()
            box.withLockedValue { $0 = info }
        }
        timer.resume()
    }

    var latest: ProxyInfo { box.withLockedValue { $0 } }

    func stop() {
        timer.cancel()
    }
}
