// swift-tools-version:6.1
import Foundation
import PackageDescription

/// ProxyApp: an intercepting HTTP/HTTPS proxy with a terminal UI.
///
/// Targets mirror the architecture (see CLAUDE.md): the model at the bottom, protocol decisions
/// without I/O above it, the NIO engine and the capture store beside each other, and the CLI as
/// the one composition root. Dependencies point one way.
/// Release builds skip dynamic exclusivity checks in the hot-path targets: they were ~3% of a
/// proxied request in profiles. Debug builds (and so the tests) keep them.
let hotPathSettings: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "ProxyApp",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "proxyapp", targets: ["proxyapp"]),
        .library(name: "ProxyEngine", targets: ["ProxyEngine"]),
        .library(name: "CaptureStore", targets: ["CaptureStore"]),
        .library(name: "SharedCapture", targets: ["SharedCapture"]),
        .library(name: "FlowExport", targets: ["FlowExport"]),
        .library(name: "TerminalUI", targets: ["TerminalUI"]),
        .library(name: "ProxyAppUI", targets: ["ProxyAppUI"]),
        .library(name: "Rules", targets: ["Rules"]),
        .library(name: "RulesFile", targets: ["RulesFile"]),
        .library(name: "PersistentPins", targets: ["PersistentPins"]),
        .library(name: "ControlChannel", targets: ["ControlChannel"]),
        .library(name: "RequestComposer", targets: ["RequestComposer"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
        .package(url: "https://github.com/groue/GRDB.swift.git", from: "7.10.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-nio-http2.git", from: "1.46.0"),
        .package(url: "https://github.com/apple/swift-nio-extras.git", from: "1.35.2"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "4.5.2"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/jpsim/Yams.git", from: "6.2.2"),
        // Already resolved through swift-nio; the engine's connection counter uses it directly.
        .package(url: "https://github.com/apple/swift-atomics.git", from: "1.2.0"),
        // The shared capture in PostgreSQL (--store postgres://…): SharedCapture.
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
    ],
    targets: [
        // Flows, headers, timings: value types with no I/O and no NIO.
        .target(name: "ProxyModel", swiftSettings: hotPathSettings),
        // Protocol decisions without I/O: request targets, hop-by-hop rules, failure mapping.
        // swift-crypto for the SHA-256 of the ClientHello fingerprint (ClientHelloFingerprint).
        .target(name: "ProxyCore", dependencies: ["ProxyModel", .product(name: "Crypto", package: "swift-crypto")],
                swiftSettings: hotPathSettings),
        // SQLite's C API (Debian's libsqlite3-dev), for binding the capture insert directly.
        .systemLibrary(name: "CSQLite", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        // The C decompressors behind BodyCodec (Debian's -dev packages; scripts/lib/deps.sh).
        .systemLibrary(name: "CZlib", pkgConfig: "zlib", providers: [.apt(["zlib1g-dev"])]),
        .systemLibrary(name: "CBrotli", pkgConfig: "libbrotlidec", providers: [.apt(["libbrotli-dev"])]),
        .systemLibrary(name: "CZstd", pkgConfig: "libzstd", providers: [.apt(["libzstd-dev"])]),
        // xxHash (Debian libxxhash-dev): XXH3-128 names the captured body files (BodyContentHasher).
        .systemLibrary(name: "CXXHash", pkgConfig: "libxxhash", providers: [.apt(["libxxhash-dev"])]),
        // libqrencode (Debian libqrencode-dev): QR codes of the CA page URL.
        .systemLibrary(name: "CQRencode", pkgConfig: "libqrencode", providers: [.apt(["libqrencode-dev"])]),
        // libxcrypt (Debian libcrypt-dev): bcrypt checks for --auth-file's htpasswd entries.
        .systemLibrary(name: "CCrypt", pkgConfig: "libxcrypt", providers: [.apt(["libcrypt-dev"])]),
        // A QR code for a phone to scan: half blocks for the terminal, PNG for a file.
        .target(name: "QRCode", dependencies: ["CQRencode", "CZlib"]),
        // c-ares (Debian's libc-ares-dev): DNS lookups all in flight at once on one thread of the engine's.
        .systemLibrary(name: "CAres", pkgConfig: "libcares", providers: [.apt(["libc-ares-dev"])]),
        // RE2 (Debian's libre2-dev) behind a small C API: C++ inside, a plain C header for Swift.
        .target(name: "CRE2Shim", linkerSettings: [.linkedLibrary("re2")]),
        // Regexes that match in linear time (RE2): every pattern evaluated on traffic or captures.
        .target(name: "LinearRegex", dependencies: ["CRE2Shim"], swiftSettings: hotPathSettings),
        // Content-Encoding decoding (gzip, deflate, br, zstd), bounded: one module for export, TUI, rules.
        .target(name: "BodyCodec", dependencies: ["CZlib", "CBrotli", "CZstd"]),
        // The filter language (mitmproxy's `~d`, `~u`, `~c`, ... with `!`, `&`, `|`): parser and evaluator.
        .target(name: "FlowFilter", dependencies: ["ProxyModel", "BodyCodec", "LinearRegex"]),
        // Exchange formats: HAR 1.2 export (streaming) and import, redaction, curl and raw HTTP.
        .target(name: "FlowExport", dependencies: ["ProxyModel", "BodyCodec"], swiftSettings: hotPathSettings),
        // SQLite capture: migrations, records, the TrafficRepository (pins' table included), the batching writer.
        .target(
            name: "CaptureStore",
            dependencies: ["ProxyModel", "FlowFilter", "LinearRegex", "CSQLite", "CXXHash",
                           .product(name: "GRDB", package: "GRDB.swift"), .product(name: "Logging", package: "swift-log")],
            swiftSettings: hotPathSettings
        ),
        // The capture in PostgreSQL, shared by a team's proxies (--store postgres://…): the writer
        // backend behind CaptureWriter, the schema, and the reads of `flows --store`.
        .target(
            name: "SharedCapture",
            dependencies: ["CaptureStore", "ProxyModel", "FlowFilter",
                           .product(name: "PostgresNIO", package: "postgres-nio"),
                           .product(name: "NIOCore", package: "swift-nio"),
                           .product(name: "NIOPosix", package: "swift-nio"),
                           .product(name: "NIOSSL", package: "swift-nio-ssl"),
                           .product(name: "Logging", package: "swift-log")]
        ),
        // The pin registry the proxy runs with: ProxyCore's auto-pin policy behind a lock, saved in the capture.
        .target(
            name: "PersistentPins",
            dependencies: ["CaptureStore", "ProxyCore", "ProxyModel", .product(name: "Logging", package: "swift-log")]
        ),
        // The root CA, leaf minting and the TLS contexts: everything that knows about certificates.
        .target(
            name: "ProxyTLS",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        // The rules engine: the rule model, host and path matching, the per-request plan, body text
        // rewriting and the rules in force (LiveRules). No file format: the engine links this alone.
        .target(
            name: "Rules",
            dependencies: ["ProxyModel", "ProxyCore", "BodyCodec", "LinearRegex"],
            swiftSettings: hotPathSettings
        ),
        // The rules file: YAML (Yams) parsed and validated with line numbers into a RuleSet, and the
        // watcher that reloads it. Linked by the composition root, never by the engine.
        .target(
            name: "RulesFile",
            dependencies: ["Rules", "ProxyCore", "ProxyModel", "LinearRegex", .product(name: "Yams", package: "Yams")]
        ),
        // SwiftNIO handlers, upstream pool, tunnels and the server.
        .target(
            name: "ProxyEngine",
            dependencies: [
                "ProxyModel", "ProxyCore", "ProxyTLS", "Rules", "BodyCodec", "CAres", "CCrypt",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOSOCKS", package: "swift-nio-extras"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Atomics", package: "swift-atomics"),
            ],
            swiftSettings: hotPathSettings
        ),
        // The terminal UI: screen grid, flow-list model and rendering as pure functions, and a thin
        // termios/ANSI backend that redraws only changed cells.
        .target(name: "TerminalUI", dependencies: ["ProxyModel", "BodyCodec", "QRCode", "FlowFilter"]),
        // HAR files from the capture store: shared by `proxyapp export --har` and the TUI.
        .target(name: "CaptureExport", dependencies: ["CaptureStore", "FlowExport", "ProxyModel"]),
        // The TUI application: the capture feed, the controller (keys to state to frames), the terminal loop.
        .target(
            name: "ProxyAppUI",
            dependencies: [
                "TerminalUI", "CaptureStore", "CaptureExport", "FlowFilter", "FlowExport", "ProxyModel", "RequestComposer",
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The running proxy's local control channel (a Unix socket, JSON lines): replay, send, holds.
        .target(name: "ControlChannel", dependencies: ["ProxyModel", .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]),
        // The CLI and the one composition root.
        .executableTarget(
            name: "proxyapp",
            dependencies: [
                "ProxyModel", "ProxyEngine", "CaptureStore", "ProxyTLS", "FlowFilter", "FlowExport", "TerminalUI",
                "CaptureExport", "ProxyAppUI", "Rules", "RulesFile", "ProxyCore", "PersistentPins", "QRCode",
                "ControlChannel", "RequestComposer", "SharedCapture",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Benchmark tools, not the product: they live under Benchmarks/ (scripts/bench builds them
        // by product name). Prints the cost of minting a leaf certificate.
        .executableTarget(
            name: "proxyapp-bench-mint",
            dependencies: [
                "ProxyTLS",
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            path: "Benchmarks/proxyapp-bench-mint"
        ),
        // Writes N synthetic flows into a capture database (scripts/bench's export figure; large captures to try).
        .executableTarget(name: "proxyapp-bench-flows", dependencies: ["CaptureStore", "ProxyModel", "BodyCodec", "SeededRandom"],
                          path: "Benchmarks/proxyapp-bench-flows"),
        // The rule lookups of one request, timed without I/O (scripts/bench's rules phase).
        .executableTarget(name: "proxyapp-bench-rules", dependencies: ["Rules", "RulesFile", "ProxyCore"],
                          path: "Benchmarks/proxyapp-bench-rules", swiftSettings: hotPathSettings),
        // The TUI's figures on a large capture (scripts/bench's tui phase): first frame, key to frame.
        .executableTarget(name: "proxyapp-bench-tui", dependencies: ["ProxyAppUI", "TerminalUI", "CaptureStore", "FlowFilter"],
                          path: "Benchmarks/proxyapp-bench-tui"),
        // The load generator of scripts/bench: HTTP and CONNECT + TLS load, one request in flight per connection.
        .executableTarget(
            name: "proxyapp-load",
            dependencies: [
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ],
            path: "Benchmarks/proxyapp-load",
            swiftSettings: hotPathSettings
        ),
        // Test support: a throwaway PostgreSQL cluster (initdb, pg_ctl) for the shared-capture tests.
        .target(name: "PostgresTestSupport", dependencies: ["SharedCapture", "TestSupport", "ChildProcess"],
                path: "Tests/Support/PostgresTestSupport"),
        .testTarget(name: "SharedCaptureTests",
                    dependencies: ["SharedCapture", "CaptureStore", "ProxyModel", "FlowFilter", "PostgresTestSupport",
                                   "CaptureTestSupport", "TestSupport", "ProxyAppUI", "TerminalUI", "PersistentPins", "ProxyCore",
                                   .product(name: "Logging", package: "swift-log")]),
        // Test support: runs client programs (curl, openssl) for the test targets that need them.
        .target(
            name: "ChildProcess",
            dependencies: [.product(name: "NIOConcurrencyHelpers", package: "swift-nio")],
            path: "Tests/Support/ChildProcess"
        ),
        // Test support: a DNS server on loopback UDP that answers, delays, fails or ignores names as a test says.
        .target(
            name: "FakeDNS",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ],
            path: "Tests/Support/FakeDNS"
        ),
        // Test support: a seeded random generator, so random inputs replay from their seed.
        .target(name: "SeededRandom", path: "Tests/Support/SeededRandom"),
        // Test support: temporary directories for tests that need real files, removed at the test's end
        // (XCTest only for that teardown block).
        .target(name: "TestSupport", path: "Tests/Support/TestSupport"),
        // Test support: a capture database in a temporary directory, for the targets that test over one.
        .target(name: "CaptureTestSupport", dependencies: ["CaptureStore", "ProxyModel", "FlowFilter", "TestSupport",
                                                         .product(name: "Logging", package: "swift-log")],
                path: "Tests/Support/CaptureTestSupport"),
        // Test support: checks a HAR document against the HAR 1.2 rules the export promises.
        .target(name: "HARValidation", path: "Tests/Support/HARValidation"),
        .testTarget(name: "ProxyModelTests", dependencies: ["ProxyModel"]),
        .testTarget(name: "LinearRegexTests", dependencies: ["LinearRegex"]),
        .testTarget(name: "QRCodeTests", dependencies: ["QRCode", "ChildProcess", "TestSupport"]),
        // Test support: gzip, deflate, br and zstd encoders over the C libraries.
        .target(name: "Compressors", dependencies: ["CZlib", "CBrotli", "CZstd"], path: "Tests/Support/Compressors"),
        // ProxyCore for the WebSocket inflater tests: compressed messages through `WebSocketFrameReader`.
        .testTarget(name: "BodyCodecTests", dependencies: ["BodyCodec", "Compressors", "SeededRandom", "ProxyCore",
                                                      "WebSocketTestSupport"]),
        // Test support: WebSocket frames built byte by byte, for the reader's and the inflater's tests.
        .target(name: "WebSocketTestSupport", dependencies: ["ProxyCore", "SeededRandom"],
                path: "Tests/Support/WebSocketTestSupport"),
        .testTarget(name: "TerminalUITests", dependencies: ["TerminalUI", "ProxyModel", "BodyCodec", "FlowFilter", "Compressors", "SeededRandom"]),
        .testTarget(name: "ProxyAppUITests", dependencies: ["ProxyAppUI", "TerminalUI", "CaptureStore", "ProxyModel", "FlowFilter",
                                                       "TestSupport", "CaptureTestSupport", "QRCode", "RequestComposer",
                                                       .product(name: "NIOConcurrencyHelpers", package: "swift-nio")]),
        .testTarget(name: "FlowFilterTests", dependencies: ["FlowFilter", "ProxyModel", "BodyCodec"]),
        .testTarget(name: "FlowExportTests", dependencies: ["FlowExport", "ProxyModel", "BodyCodec", "Compressors", "HARValidation"]),
        .testTarget(
            name: "proxyappTests",
            dependencies: ["proxyapp", "CaptureStore", "CaptureExport", "ProxyModel", "ProxyTLS", "FlowFilter", "FlowExport", "TerminalUI", "Rules",
                           "ProxyCore", "ProxyEngine", "ControlChannel",
                           "RulesFile", "TestSupport", .product(name: "ArgumentParser", package: "swift-argument-parser"),
                           .product(name: "Logging", package: "swift-log")]
        ),
        .testTarget(name: "ControlChannelTests", dependencies: ["ControlChannel", "TestSupport"]),
        // Requests a person writes: curl command lines (`import --curl`) and the editor's raw HTTP text.
        .target(name: "RequestComposer", dependencies: ["ProxyModel", "BodyCodec"]),
        .testTarget(name: "RequestComposerTests", dependencies: ["RequestComposer", "ProxyModel", "BodyCodec", "FlowExport"],
                    resources: [.copy("Samples")]),
        .testTarget(name: "ProxyCoreTests", dependencies: ["ProxyCore", "ProxyModel", "SeededRandom", "WebSocketTestSupport"]),
        // Test support: rule fixtures (requests, host lists, rules written as YAML).
        .target(name: "RulesTestSupport", dependencies: ["Rules", "RulesFile", "ProxyCore"], path: "Tests/Support/RulesTestSupport"),
        // The model's tests write their rules as YAML (RulesFile) for readability; the file's own
        // behaviour (parsing, every refusal, reading, reloading) is tested in RulesFileTests.
        .testTarget(name: "RulesTests", dependencies: ["Rules", "RulesFile", "RulesTestSupport", "ProxyCore", "ProxyModel", "BodyCodec",
                                                       "Compressors", "LinearRegex", "SeededRandom", "TestSupport"]),
        .testTarget(name: "RulesFileTests", dependencies: ["RulesFile", "Rules", "RulesTestSupport", "ProxyCore", "TestSupport"]),
        .testTarget(
            name: "proxyapp-loadTests",
            dependencies: [
                "proxyapp-load",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Benchmarks/proxyapp-loadTests"
        ),
        .testTarget(
            name: "CaptureStoreTests",
            dependencies: ["CaptureStore", "ProxyModel", "FlowFilter", "BodyCodec", "SeededRandom", "TestSupport", "CaptureTestSupport",
                           .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "Logging", package: "swift-log"), .product(name: "Crypto", package: "swift-crypto")]
        ),
        .testTarget(
            name: "PersistentPinsTests",
            dependencies: ["PersistentPins", "CaptureStore", "ProxyCore", "ProxyModel", "TestSupport", "CaptureTestSupport",
                           .product(name: "GRDB", package: "GRDB.swift"),
                           .product(name: "Logging", package: "swift-log"), .product(name: "InMemoryLogging", package: "swift-log")]
        ),
        // Test support: the engine's client pipeline in memory (EngineHarness, fake upstreams) and an
        // independent strict HTTP/1.1 request parser; shared by the engine's tests, the end-to-end
        // tests and the request-path fuzzer. Uses `@testable import ProxyEngine`: debug builds only.
        .target(
            name: "EngineTestSupport",
            dependencies: [
                "ProxyEngine", "ProxyModel", "Rules", "RulesFile",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Tests/Support/EngineTestSupport"
        ),
        .testTarget(
            name: "ProxyEngineTests",
            dependencies: [
                "ProxyEngine", "ProxyModel", "ProxyCore", "ProxyTLS", "Rules", "RulesFile", "Compressors", "EngineTestSupport",
                "LinearRegex", "FakeDNS", "CAres", "TestSupport", "SeededRandom",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
            ]
        ),
        .testTarget(
            name: "ProxyTLSTests",
            dependencies: [
                "ProxyTLS", "ChildProcess", "TestSupport",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
            ]
        ),
        .testTarget(
            name: "EndToEndTests",
            dependencies: [
                "ProxyEngine", "CaptureStore", "ProxyCore", "ProxyModel", "ProxyTLS", "ChildProcess", "FlowExport", "BodyCodec", "Rules",
                "RulesFile", "EngineTestSupport", "FakeDNS", "PersistentPins", "TestSupport",
                "HARValidation", "CaptureExport", "FlowFilter", "ControlChannel", "PostgresTestSupport", "CaptureTestSupport",
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "NIOTLS", package: "swift-nio"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOHTTP2", package: "swift-nio-http2"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            // Run by path from the tests (a gRPC server and client in Python), not built.
            exclude: ["Support/Scripts"]
        ),
    ],
    cxxLanguageStandard: .cxx17
)

// The request-path fuzzer (fuzz/run-request-path.sh), only when asked for: it has no `main` of
// its own (libFuzzer supplies it), so an ordinary build could not link it.
if ProcessInfo.processInfo.environment["PROXYAPP_FUZZ"] != nil {
    package.targets.append(.executableTarget(
        name: "proxyapp-fuzz-request-path",
        dependencies: ["EngineTestSupport", "ProxyEngine", "ProxyModel",
                       .product(name: "NIOCore", package: "swift-nio"),
                       .product(name: "NIOEmbedded", package: "swift-nio")],
        path: "fuzz/RequestPath",
        swiftSettings: [.unsafeFlags(["-parse-as-library"])]
    ))
}

