import ChildProcess
import Foundation
import TestSupport
import XCTest

/// `scripts/lib/link-order-trace.c`, the breakpoint tracer `make-link-order.sh` builds the release
/// link order from, on a small C program: each function that runs is listed once, in the order it
/// first ran, one that never runs is not, SIGUSR2 lists again what runs after it, and an `int3`
/// that is the program's own stops the program (no endless trap loop).
final class LinkOrderTraceTests: XCTestCase {
    private static let program = #"""
        #include <signal.h>
        __attribute__((noinline)) int used(int x) { return x * 3; }
        __attribute__((noinline)) int unused(int x) { return x + 7; }
        __attribute__((noinline)) int later(int x) { return x - 1; }
        __attribute__((naked, noinline)) void own_trap(void) { __asm__("int3\n\tret"); }
        int main(int argc, char **argv) {
            volatile int v = argc;
            v = used(v); v = used(v);
            if (argc > 5) v = unused(v);
            raise(SIGUSR2);
            v = used(v); v = later(v);
            if (argc == 2) own_trap();
            return 0;
        }
        """#

    /// Compiles the tracer and the program in a scratch folder, runs the program under the tracer
    /// (`arguments` passed on), and prints the traced functions' names, a line each, then the exit status.
    private func trace(_ arguments: String) async throws -> [String] {
        let directory = try makeTemporaryDirectory("link-order-trace")
        let tracer = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("scripts/lib/link-order-trace.c").path
        try Self.program.write(toFile: directory.file("program.c"), atomically: true, encoding: .utf8)
        let script = """
            set -e
            cd '\(directory.url.path)'
            clang=$(command -v clang || echo /opt/swift/usr/bin/clang)
            "$clang" -O2 -shared -fPIC -o trace.so '\(tracer)'
            "$clang" -O1 -o program program.c
            nm -S --defined-only program | awk '$3 ~ /^[tT]$/ && $2 !~ /^0+$/ { sub(/^0+/, "", $1); print $1, $4 }' >functions
            awk '{ print $1 }' functions >entries
            set +e
            timeout 10 env LD_PRELOAD=$PWD/trace.so LINK_ORDER_TRACE_LIST=entries LINK_ORDER_TRACE_OUT=ran ./program \(arguments)
            status=$?
            awk 'FNR == NR { name[$1] = $2; next } { print ($1 == "-" ? "-" : name[$1]) }' functions ran
            echo "status=$status"
            """
        let outcome = try await ChildProcess.run("/bin/bash", ["-c", script], timeout: 60)
        XCTAssertFalse(outcome.killed, "the traced program did not finish within 60 s")
        XCTAssertEqual(outcome.exitCode, 0, String(decoding: outcome.stderr, as: UTF8.self))
        return String(decoding: outcome.stdout, as: UTF8.self).split(separator: "\n").map(String.init)
    }

    func testEachFunctionThatRunsIsListedOnceInOrderAndAgainAfterSIGUSR2() async throws {
        let lines = try await trace("")
        XCTAssertEqual(lines, ["_start", "main", "used", "-", "used", "later", "status=0"])
    }

    func testAnInt3OfTheProgramItselfStopsItInsteadOfLooping() async throws {
        let lines = try await trace("one")
        // SIGTRAP's default action: the shell reports 128 + 5 (a loop would be timeout's 124).
        XCTAssertEqual(lines.last, "status=133", "\(lines)")
        XCTAssertFalse(lines.contains("own_trap"), "\(lines)")
    }
}
