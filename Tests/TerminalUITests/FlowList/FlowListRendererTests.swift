import Foundation
import ProxyModel
import TerminalUI
import XCTest

/// `FlowListRenderer`: screen snapshots at 80×24 and 200×50 (checked by eye once: columns line up
/// with wide and combining characters, long values end in `…`), and the styles of a few cells.
final class FlowListRendererTests: XCTestCase {
    private func render(width: Int, height: Int, message: StatusMessage? = nil) -> ScreenGrid {
        FlowListRenderer.render(FlowListFixtures.state(screenHeight: height), header: FlowListFixtures.header,
                                size: ScreenSize(width: width, height: height), message: message)
    }

    /// Narrow: TYPE, DURATION and TIME gave way to PATH (path and query only: the host has its
    /// column, shortened from the left), the header clipped, an error message in the status line.
    func testSnapshot80x24() {
        let grid = render(width: 80, height: 24, message: StatusMessage(.error, "filter: unexpected ')' at 5"))
        XCTAssertEqual(grid.text, """
            ProxyApp  listening 127.0.0.1:8080  1,234 flows  filter: ~d api  rules: off
              ID    METHOD  STATUS HOST               PATH                              SIZE
               1 h1 GET     200    example.com        /                              5.0 KiB
               2 h1 GET     200    api.example.com    /v1/users?page=2               1.2 KiB
               3 h1 GET     404    example.com        /missing                         162 B
               4 h1 POST    500    ….example.com:8443 /orders                           87 B
               5 h1 GET     ERR    down.test          /health
               6 h1 GET     …      slow.test          /long-poll
               7    CONNECT TUN    push.test                                        46.9 KiB
               8    CONNECT TUN    bank.test          pinned: client rejected the…   3.3 MiB
            ●  9 h1 GET     301    old.test           /                                  0 B
              10 h1 GET     200    例え.テスト        /検索?q=日本語                    42 B
              11 h1 GET     200    café.test          /café/ménu                       900 B
              12 h1 GET     200    cdn.example.com    /assets/very-long-segment/v…   2.3 MiB
            ◆ 13 h1 PUT     204    api.local:3000     /items/42                          0 B
              14 h1 OPTIONS 200    api.example.com    /v1/users                          0 B
            ● 15 h1 DELETE  403    api.example.com    /v1/users/9                       25 B






            row 4 of 15  filter: unexpected ')' at 5                          ? help  q quit
            """)
    }

    /// A shared capture's rows name their proxy: a PROXY column appears, as wide as the longest
    /// name shown (at most 12, longer names end in `…`), and HOST and PATH give it the room.
    func testProxyColumnForASharedCapture() {
        var state = FlowListState(totalRows: 3, visibleRows: FlowListRenderer.listRows(screenHeight: 8))
        let names = ["lab-1", "ci-runner-b", "a-very-long-proxy-name"]
        state.load(FlowListFixtures.flows.prefix(3).enumerated().map { index, flow in
            var flow = flow
            flow.proxyName = names[index]
            return FlowRow(flow, timeZone: FlowListFixtures.utc)
        }, at: 0)
        let grid = FlowListRenderer.render(state, header: FlowListFixtures.header, size: ScreenSize(width: 80, height: 8))
        XCTAssertEqual(grid.text, """
            ProxyApp  listening 127.0.0.1:8080  1,234 flows  filter: ~d api  rules: off
              ID    METHOD  STATUS PROXY        HOST          PATH                      SIZE
               1 h1 GET     200    lab-1        example.com   /                      5.0 KiB
               2 h1 GET     200    ci-runner-b  ….example.com /v1/users?page=2       1.2 KiB
               3 h1 GET     404    a-very-long… example.com   /missing                 162 B


            following  http://example.com/missing                             ? help  q quit
            """)
    }

    func testSnapshot200x50() {
        XCTAssertEqual(render(width: 200, height: 50).text, """
            ProxyApp  listening 127.0.0.1:8080  CA http://127.0.0.1:8080/ProxyCA.cer  1,234 flows  filter: ~d api  rules: off
              ID TIME            METHOD  STATUS HOST                           PATH                                                                                      TYPE                          SIZE DURATION
               1 09:05:03.292 h1 GET     200    example.com                    /                                                                                         text/html                  5.0 KiB    41 ms
               2 09:05:03.542 h1 GET     200    api.example.com                /v1/users?page=2                                                                          application/json           1.2 KiB   120 ms
               3 09:05:03.792 h1 GET     404    example.com                    /missing                                                                                  text/html                    162 B    41 ms
               4 09:05:04.042 h1 POST    500    api.example.com:8443           /orders                                                                                   application/problem+json      87 B    2.5 s
               5 09:05:04.292 h1 GET     ERR    down.test                      /health                                                                                                                         41 ms
               6 09:05:04.542 h1 GET     …      slow.test                      /long-poll
               7 09:05:04.792    CONNECT TUN    push.test                                                                                                                                          46.9 KiB   12.5 s
               8 09:05:05.042    CONNECT TUN    bank.test                      pinned: client rejected the certificate (unknown_ca alert)                                                           3.3 MiB   12.5 s
            ●  9 09:05:05.292 h1 GET     301    old.test                       /                                                                                                                        0 B    41 ms
              10 09:05:05.542 h1 GET     200    例え.テスト                    /検索?q=日本語                                                                            text/plain                    42 B    41 ms
              11 09:05:05.792 h1 GET     200    café.test                      /café/ménu                                                                                text/html                    900 B    41 ms
              12 09:05:06.042 h1 GET     200    cdn.example.com                /assets/very-long-segment/very-long-segment/very-long-segment/very-long-segment/very-lon… application/javascript     2.3 MiB     0 ms
            ◆ 13 09:05:06.292 h1 PUT     204    api.local:3000                 /items/42                                                                                                                0 B     3 ms
              14 09:05:06.542 h1 OPTIONS 200    api.example.com                /v1/users                                                                                                                0 B    41 ms
            ● 15 09:05:06.792 h1 DELETE  403    api.example.com                /v1/users/9                                                                               application/json              25 B    41 ms
































            row 4 of 15  https://api.example.com:8443/orders                                                                                                                                          ? help  q quit
            """)
    }

    /// Row 5 is the selected 500; row 6 the failed exchange; 8 a tunnel; 9 a pinned tunnel; 10 marked;
    /// 14 touched by a rule; 16 marked and touched by a rule.
    func testCellStyles() {
        let grid = render(width: 80, height: 24, message: StatusMessage(.error, "bad filter"))
        let status = 16, host = 23, proto = 5
        XCTAssertTrue(grid[0, 0].style.reverse, "header bar")
        XCTAssertTrue(grid[0, 79].style.reverse, "header bar to the edge")
        XCTAssertTrue(grid[1, 2].style.bold)
        XCTAssertEqual(grid[2, status].style.foreground, .green)
        XCTAssertFalse(grid[2, status].style.reverse)
        XCTAssertEqual(grid[3, status].style.foreground, .green)
        XCTAssertEqual(grid[4, status].style.foreground, .yellow)

        XCTAssertEqual(grid[5, status].style.foreground, .red, "5xx red")
        for column in [0, 2, host, 79] {
            XCTAssertTrue(grid[5, column].style.reverse, "the selected row is reverse across, column \(column)")
        }
        XCTAssertEqual(grid[6, status].style, CellStyle(foreground: .red, bold: true), "ERR red bold")
        XCTAssertEqual(grid[7, status].style, .plain, "pending")
        XCTAssertTrue(grid[8, host].style.dim, "tunnels are dim")
        XCTAssertEqual(grid[8, status].style, CellStyle(dim: true))
        XCTAssertEqual(grid[9, host].style.foreground, .magenta, "pinned tunnels magenta")
        XCTAssertFalse(grid[9, host].style.dim)
        XCTAssertEqual(grid[10, 0].text, "●")
        XCTAssertEqual(grid[10, 0].style.foreground, .yellow)
        XCTAssertEqual(grid[10, status].style.foreground, .cyan, "3xx cyan")
        XCTAssertEqual(grid[2, 0].text, " ", "unmarked rows leave the marker column blank")
        XCTAssertEqual(grid[14, 0].text, "◆", "a rule acted on the PUT")
        XCTAssertEqual(grid[14, 0].style.foreground, .cyan)
        XCTAssertEqual(grid[16, 0].text, "●", "a marked flow shows its mark, rules or not")
        XCTAssertEqual(grid[16, 0].style.foreground, .yellow)
        XCTAssertEqual(grid[23, 13].style.foreground, .red, "the error message")
        XCTAssertEqual(grid[2, proto].text, "h")
        XCTAssertTrue(grid[2, proto].style.dim, "h1, the usual case, is dim so h2 and ws stand out")
    }

    func testFollowingEmptyAndUnloaded() {
        let size = ScreenSize(width: 70, height: 6)
        var state = FlowListState(totalRows: 0, visibleRows: FlowListRenderer.listRows(screenHeight: 6))
        var grid = FlowListRenderer.render(state, header: HeaderInfo(flowCount: 0), size: size)
        XCTAssertEqual(grid.text, """
            ProxyApp  0 flows  rules: off
              ID    METHOD  STATUS HOST           PATH                        SIZE
              No flows yet: waiting for traffic.


            no flows                                                ? help  q quit
            """)
        state.filterText = "~c 500"
        grid = FlowListRenderer.render(state, header: HeaderInfo(flowCount: 1, filter: "~c 500"), size: size)
        XCTAssertEqual(grid.rowText(2).trimmingCharacters(in: .whitespaces), "No flows match the filter.")
        XCTAssertEqual(grid.rowText(0).trimmingCharacters(in: .whitespaces), "ProxyApp  1 flow  filter: ~c 500  rules: off")

        state.rowsAppended(newTotal: 5)
        state.load([FlowRow(FlowListFixtures.flows[0], timeZone: FlowListFixtures.utc)], at: 4)
        grid = FlowListRenderer.render(state, header: HeaderInfo(flowCount: 5), size: size)
        XCTAssertEqual(grid.text, """
            ProxyApp  5 flows  rules: off
              ID    METHOD  STATUS HOST           PATH                        SIZE
              …
              …
               1 h1 GET     200    example.com    /                        5.0 KiB
            following  http://example.com/                          ? help  q quit
            """, "rows not loaded yet show a placeholder; the last row is selected")
        XCTAssertTrue(grid[4, 40].style.reverse)
        XCTAssertFalse(grid[3, 40].style.reverse)
    }

    /// The selected flow's whole URL is on the status line (cut at the edge, the hint giving way);
    /// the ID column widens to the largest id shown, and HOST is shortened from the left.
    func testStatusLineURLAndLargeIDs() {
        var state = FlowListState(totalRows: 2, visibleRows: FlowListRenderer.listRows(screenHeight: 6))
        var long = FlowListFixtures.flows[11]
        long.id = 1_234_567
        long.host = "assets.eu-west-1.cdn.example.com"
        state.load([FlowListFixtures.flows[0], long].map { FlowRow($0, timeZone: FlowListFixtures.utc) }, at: 0)
        state.apply(.home)
        state.apply(.moveDown)
        let grid = FlowListRenderer.render(state, header: HeaderInfo(flowCount: 2), size: ScreenSize(width: 80, height: 6))
        XCTAssertEqual(grid.text, """
            ProxyApp  2 flows  rules: off
                   ID    METHOD  STATUS HOST             PATH                           SIZE
                    1 h1 GET     200    example.com      /                           5.0 KiB
              1234567 h1 GET     200    …cdn.example.com /assets/very-long-segmen…   2.3 MiB

            row 2 of 2  http://assets.eu-west-1.cdn.example.com/assets/very-long-segment/ve…
            """)
    }

    /// Screens too small for the layout draw what fits and never trap.
    /// At 80 columns a long intercept filter is cut at the edge, never the count of held
    /// exchanges, which comes right after the flow count.
    func testHeldCountSurvivesALongInterceptFilterAt80Columns() {
        let header = HeaderInfo(listenAddress: "127.0.0.1:8080", flowCount: 12, rules: "3 active", throttle: "3g + 2 rules",
                                intercept: "~s & ~d api.example.com & ~m POST & ~u /v1/orders", held: 2)
        let state = FlowListState(totalRows: 0, visibleRows: FlowListRenderer.listRows(screenHeight: 6))
        let grid = FlowListRenderer.render(state, header: header, size: ScreenSize(width: 80, height: 6))
        let top = grid.text.split(separator: "\n").first.map(String.init) ?? ""
        XCTAssertTrue(top.hasPrefix("ProxyApp  listening 127.0.0.1:8080  12 flows  HELD: 2  rules: 3 active"), top)
    }

    func testTinyScreens() {
        let state = FlowListFixtures.state(screenHeight: 3)
        for (width, height) in [(0, 0), (1, 1), (10, 1), (10, 2), (10, 3), (30, 4), (99, 5), (100, 5)] {
            let grid = FlowListRenderer.render(state, header: FlowListFixtures.header,
                                               size: ScreenSize(width: width, height: height))
            XCTAssertEqual(grid.width, width)
            XCTAssertEqual(grid.height, height)
        }
        let grid = FlowListRenderer.render(state, header: FlowListFixtures.header, size: ScreenSize(width: 10, height: 2))
        XCTAssertEqual(grid.text, "ProxyApp …\n  ID    ME")
    }
}
