import TerminalUI
import XCTest

/// `InfoPage`: what the `i` screen and the empty list tell a newcomer, for a proxy in this
/// process, in another one, and none; screens at 80×24 and 200×50.
final class InfoPageTests: XCTestCase {
    static let running = ProxyInfo(
        proxy: .thisProcess, listenAddress: "127.0.0.1:8080", dataDirectory: "/home/ada/.proxyapp",
        capturePath: "/home/ada/.proxyapp/traffic.sqlite", logPath: "/home/ada/.proxyapp/proxyapp.log",
        caCertificatePath: "/home/ada/.proxyapp/ca/ProxyCA.pem", caCreatedNow: true,
        rules: ["Rules: 4 active from /home/ada/.proxyapp/rules.yml (edits are reloaded while the proxy runs)"],
        keeping: "up to 2.0 GiB, 30d (oldest go first; marked kept)")

    private func page(_ info: ProxyInfo, width: Int, height: Int) -> String {
        TextPageRenderer.render(title: "ProxyApp  info", lines: InfoPage.lines(info), state: TextPageState(),
                                hint: "j/k scroll  any other key closes", size: ScreenSize(width: width, height: height)).text
    }

    func testInfoScreen80x24() {
        XCTAssertEqual(page(Self.running, width: 80, height: 24), """
            ProxyApp  info
            Proxy
              listening on 127.0.0.1:8080 (this process; quitting stops it)

            Send traffic through the proxy:
              curl -x http://127.0.0.1:8080 https://example.com/
              export http_proxy=http://127.0.0.1:8080 https_proxy=http://127.0.0.1:8080
              (curl ignores HTTP_PROXY; other tools read HTTP_PROXY and HTTPS_PROXY too)

            HTTPS is decrypted with ProxyApp's CA (created now: no client trusts it yet):
              open http://proxyapp.cert/ through the proxy, or fetch
                http://127.0.0.1:8080/ProxyCA.cer
              curl alone: --cacert /home/ada/.proxyapp/ca/ProxyCA.pem

            Rules: 4 active from /home/ada/.proxyapp/rules.yml (edits are reloaded while
              the proxy runs)

            Files
              data directory  /home/ada/.proxyapp
              capture         /home/ada/.proxyapp/traffic.sqlite
              keeping         up to 2.0 GiB, 30d (oldest go first; marked kept)
              log             /home/ada/.proxyapp/proxyapp.log  (E shows it)

            end (19 lines)                                  j/k scroll  any other key closes
            """)
    }

    func testInfoScreen200x50() {
        let screen = page(Self.running, width: 200, height: 50).split(separator: "\n", omittingEmptySubsequences: false)
        XCTAssertEqual(screen.count, 50)
        XCTAssertEqual(screen[10], "  open http://proxyapp.cert/ through the proxy, or fetch http://127.0.0.1:8080/ProxyCA.cer", "no wrapping when it fits")
        XCTAssertEqual(screen[13], "Rules: 4 active from /home/ada/.proxyapp/rules.yml (edits are reloaded while the proxy runs)")
        XCTAssertTrue(screen[49].hasPrefix("end (19 lines)"))
        XCTAssertTrue(screen[49].hasSuffix("j/k scroll  any other key closes"))
    }

    /// `proxyapp tui` beside a headless proxy: its address from the data directory's marker; the
    /// rules are that process's. With no proxy: how to start one, and `HOST:PORT` placeholders.
    func testOtherProcessAndNoProxy() {
        var other = Self.running
        other.proxy = .otherProcess(pid: 4242)
        other.caCreatedNow = false
        other.rules = []
        let lines = InfoPage.lines(other)
        XCTAssertEqual(lines[1], "  listening on 127.0.0.1:8080 (process 4242, on the same data directory)")
        XCTAssertTrue(lines.contains("HTTPS is decrypted with ProxyApp's CA (install it once per client):"))
        XCTAssertTrue(lines.contains("Rules: known to the proxy's process only; `proxyapp rules check` checks the file."))

        let none = InfoPage.lines(ProxyInfo(capturePath: "/tmp/old.sqlite", logPath: "/tmp/proxyapp.log"))
        XCTAssertEqual(none[1], "  no proxy is running with this data directory: this view only reads the capture")
        XCTAssertTrue(none.contains("  curl -x http://HOST:PORT https://example.com/"), "\(none)")
        XCTAssertTrue(none.contains("HTTPS is decrypted only when the proxy has a CA (`proxyapp ca show`)."))
        XCTAssertFalse(none.contains { $0.contains("data directory  ") }, "a --db capture has no data directory")

        var plain = Self.running
        plain.caCertificatePath = ""
        XCTAssertTrue(InfoPage.lines(plain).contains("HTTPS is not decrypted (--no-intercept): CONNECT is relayed as opaque tunnels."))
    }

    /// The empty list says how to start, at 80×24 (long lines wrapped under their indent).
    func testEmptyListWelcome80x24() {
        let state = FlowListState(totalRows: 0, visibleRows: FlowListRenderer.listRows(screenHeight: 24))
        let header = HeaderInfo(listenAddress: "127.0.0.1:8080", caURL: "http://127.0.0.1:8080/ProxyCA.cer",
                                rules: "4 active, reload failed (E: log)")
        let grid = FlowListRenderer.render(state, header: header, size: ScreenSize(width: 80, height: 24),
                                           welcome: InfoPage.welcome(Self.running))
        XCTAssertEqual(grid.text, """
            ProxyApp  listening 127.0.0.1:8080  0 flows  rules: 4 active, reload failed (E:…
              ID    METHOD  STATUS HOST               PATH                              SIZE
              No flows yet: waiting for traffic.

              Send traffic through the proxy:
                curl -x http://127.0.0.1:8080 https://example.com/
                export http_proxy=http://127.0.0.1:8080 https_proxy=http://127.0.0.1:8080
                (curl ignores HTTP_PROXY; other tools read HTTP_PROXY and HTTPS_PROXY too)

              HTTPS is decrypted with ProxyApp's CA (created now: no client trusts it yet):
                open http://proxyapp.cert/ through the proxy, or fetch
                  http://127.0.0.1:8080/ProxyCA.cer
                curl alone: --cacert /home/ada/.proxyapp/ca/ProxyCA.pem

              Rules: 4 active from /home/ada/.proxyapp/rules.yml (edits are reloaded while
                the proxy runs)

              i  this information again    E  event log    ?  all keys





            no flows                                                          ? help  q quit
            """)
        // A filtered view that is empty says only that.
        var filtered = state
        filtered.filterText = "~c 500"
        let narrowed = FlowListRenderer.render(filtered, header: header, size: ScreenSize(width: 80, height: 24),
                                               welcome: InfoPage.welcome(Self.running)).text
        XCTAssertFalse(narrowed.contains("curl"), narrowed)
    }

    /// Listening for devices on the network: the addresses to type into a phone and who may
    /// use the proxy come after the local lines, on the empty list's welcome too, within 80×24.
    func testDevicesOnTheNetwork80x24() {
        var lan = Self.running
        lan.devices = ["Devices on the network: set the proxy to one of these, then open its CA page:",
                       "  http://192.168.1.5:8080 (wlan0)   CA: http://192.168.1.5:8080/ProxyCA.cer",
                       "  Access: every client logs in (--auth, 1 user); any address may try to log in; they may not reach this machine's own services"]
        let info = page(lan, width: 80, height: 24).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        XCTAssertEqual(Array(info[8...12]), [
            "Devices on the network: set the proxy to one of these, then open its CA page:",
            "  http://192.168.1.5:8080 (wlan0)   CA: http://192.168.1.5:8080/ProxyCA.cer",
            "  Access: every client logs in (--auth, 1 user); any address may try to log in;",
            "    they may not reach this machine's own services",
            "",
        ])
        let state = FlowListState(totalRows: 0, visibleRows: FlowListRenderer.listRows(screenHeight: 24))
        let header = HeaderInfo(listenAddress: "127.0.0.1:8080", caURL: "", rules: "none")
        let grid = FlowListRenderer.render(state, header: header, size: ScreenSize(width: 80, height: 24),
                                           welcome: InfoPage.welcome(lan)).text
        XCTAssertTrue(grid.contains("    http://192.168.1.5:8080 (wlan0)   CA: http://192.168.1.5:8080/ProxyCA.cer"), grid)
        XCTAssertTrue(grid.contains("i  this information again"), "the welcome's last line still fits:\n\(grid)")
    }

    /// The header leaves out the CA URL rather than the rules state when the screen is narrow.
    func testHeaderKeepsTheRulesStateOnNarrowScreens() {
        let header = HeaderInfo(listenAddress: "127.0.0.1:8080", caURL: "http://127.0.0.1:8080/ProxyCA.cer",
                                flowCount: 3, rules: "2 active, reload failed (E: log)")
        XCTAssertEqual(header.text(width: 200), header.text)
        XCTAssertEqual(header.text(width: 80), "ProxyApp  listening 127.0.0.1:8080  3 flows  rules: 2 active, reload failed (E: log)")
    }
}
