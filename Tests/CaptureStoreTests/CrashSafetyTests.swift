import CaptureTestSupport
import Foundation
import ProxyModel
import TestSupport
import XCTest

@testable import CaptureStore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `kill -9` of a process that is writing flows leaves a sound database that holds every batch
/// the process had committed.
///
/// The writing process is this test binary run again with one test selected
/// (`CrashChildProcess/testChildWritesUntilKilled`) and environment variables naming the
/// database and a progress file; run normally, that helper test skips itself.
final class CrashSafetyTests: XCTestCase {
    func testKillDashNineKeepsCommittedBatchesAndIntegrity() throws {
        #if os(Linux)
        let directory = try makeTemporaryDirectory()
        let databasePath = directory.file("capture.sqlite")
        let progressPath = directory.file("progress")
        let outputPath = directory.file("child-output")
        XCTAssertTrue(FileManager.default.createFile(atPath: progressPath, contents: nil))
        XCTAssertTrue(FileManager.default.createFile(atPath: outputPath, contents: nil))

        let child = Process()
        child.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        child.arguments = ["CaptureStoreTests.CrashChildProcess/testChildWritesUntilKilled"]
        var environment = ProcessInfo.processInfo.environment
        environment[CrashChildProcess.databaseVariable] = databasePath
        environment[CrashChildProcess.progressVariable] = progressPath
        child.environment = environment
        let output = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        child.standardOutput = output
        child.standardError = output
        try child.run()
        defer { if child.isRunning { kill(child.processIdentifier, SIGKILL) } }
        func childOutput() -> String {
            (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        }

        // Let the child commit a good number of batches (each at most 200 flows), reading the
        // file from this process meanwhile: another process reads while the writer writes.
        // The wait is for that event; its bound is only a safety net, and reaching it fails.
        var reader: TrafficRepository?
        var lastCount = 0
        let started = ContinuousClock.now
        while Self.lastCommittedID(progressPath) < Self.flowsBeforeKill {
            guard child.isRunning else {
                return XCTFail("the child stopped after committing \(Self.lastCommittedID(progressPath)) flows, "
                               + "before the kill:\n\(childOutput())")
            }
            guard ContinuousClock.now - started < Self.commitBound else {
                return XCTFail("the child committed only \(Self.lastCommittedID(progressPath)) of "
                               + "\(Self.flowsBeforeKill) flows in \(Self.commitBound): the kill was never tried\n"
                               + childOutput())
            }
            if reader == nil, Self.lastCommittedID(progressPath) > 0 {
                reader = TrafficRepository(database: try TrafficDatabase.openReadOnly(path: databasePath))
            }
            if let reader {
                let count = try reader.count()
                XCTAssertGreaterThanOrEqual(count, lastCount)
                lastCount = count
            }
            usleep(20_000)
        }
        reader = nil

        // Kill at an arbitrary point of the child's write cycle, not just after a commit.
        usleep(UInt32.random(in: 0..<30_000))
        XCTAssertEqual(kill(child.processIdentifier, SIGKILL), 0)
        child.waitUntilExit()
        XCTAssertEqual(child.terminationReason, .uncaughtSignal)
        XCTAssertEqual(child.terminationStatus, SIGKILL)
        let committed = Self.lastCommittedID(progressPath)

        // A reader process opening the file right after the crash (recovery included).
        let afterCrash = TrafficRepository(database: try TrafficDatabase.openReadOnly(path: databasePath))
        let readCount = try afterCrash.count()
        XCTAssertGreaterThanOrEqual(Int64(readCount), committed, "a committed batch was lost")
        XCTAssertEqual(try afterCrash.integrityCheck(), ["ok"])

        // The proxy restarting on the same file.
        let reopened = TrafficRepository(database: try TrafficDatabase(path: databasePath))
        XCTAssertEqual(try reopened.integrityCheck(), ["ok"])
        XCTAssertGreaterThanOrEqual(Int64(try reopened.count()), committed)
        let newest = try XCTUnwrap(try reopened.latestFlows(limit: 1).first)
        XCTAssertEqual(newest.responseBody.bytes.count, 512)
        XCTAssertEqual(try reopened.insert([Samples.flow(0)]).count, 1)
        #else
        throw XCTSkip("re-running the test binary as a child is done on Linux only")
        #endif
    }

    /// Flows the child must have committed before the kill: at least 5 batches of 200.
    static let flowsBeforeKill: Int64 = 1_000
    /// The longest the child may take to commit them; only a safety net: reaching it fails.
    static let commitBound = Duration.seconds(600)

    /// The highest flow id the child reported committed (0 before any).
    static func lastCommittedID(_ progressPath: String) -> Int64 {
        guard let text = try? String(contentsOfFile: progressPath, encoding: .utf8) else { return 0 }
        return text.split(separator: "\n").compactMap { Int64($0) }.max() ?? 0
    }
}

/// Not a test: the body of the child process `CrashSafetyTests` starts and kills.
final class CrashChildProcess: XCTestCase {
    static let databaseVariable = "CAPTURESTORE_CRASH_CHILD_DATABASE"
    static let progressVariable = "CAPTURESTORE_CRASH_CHILD_PROGRESS"

    func testChildWritesUntilKilled() throws {
        let environment = ProcessInfo.processInfo.environment
        guard let databasePath = environment[Self.databaseVariable],
              let progressPath = environment[Self.progressVariable]
        else {
            throw XCTSkip("helper run only as the child process of CrashSafetyTests")
        }
        let progress = try FileHandle(forWritingTo: URL(fileURLWithPath: progressPath))
        let repository = TrafficRepository(database: try TrafficDatabase(path: databasePath))
        // Reports each committed batch's last id with one unbuffered write, after the commit.
        let writer = CaptureWriter(
            repository: repository, limits: .init(maxBatchSize: 200, maxBatchDelay: .milliseconds(10)),
            logger: CapturingLogHandler().logger,
            onCommitted: { flows in
                if let id = flows.last?.id { progress.write(Data("\(id)\n".utf8)) }
            })
        // Writes until killed; stops on its own only when its parent is gone or long after the
        // parent's bound, so an orphan never writes forever.
        let parent = getppid()
        let giveUp = ContinuousClock.now + CrashSafetyTests.commitBound + .seconds(60)
        var index = 0
        while ContinuousClock.now < giveUp, getppid() == parent {
            writer.record(Samples.flow(index, bodyBytes: 512))
            index += 1
            if index % 100 == 0 { usleep(1_000) }
        }
        writer.close()
        XCTFail("the child was never killed")
    }
}
