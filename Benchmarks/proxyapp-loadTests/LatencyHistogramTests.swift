import XCTest
@testable import proxyapp_load

/// The histogram's buckets hold every value they claim, and percentiles stay within a bucket.
final class LatencyHistogramTests: XCTestCase {
    func testEveryValueLandsInABucketThatContainsIt() {
        var values: [UInt64] = Array(0...2048)
        var value: UInt64 = 2049
        while value < 1 << 40 {
            values.append(contentsOf: [value - 1, value, value + 1])
            value = value * 3 / 2
        }
        var previousIndex = -1
        for value in values.sorted() {
            let index = LatencyHistogram.index(of: value)
            XCTAssertGreaterThanOrEqual(index, previousIndex, "index must grow with the value (\(value))")
            previousIndex = index
            let (lowest, width) = LatencyHistogram.range(of: index)
            XCTAssertTrue(value >= lowest && value < lowest + width, "\(value) outside bucket \(index) [\(lowest), +\(width))")
            XCTAssertLessThanOrEqual(Double(width), max(1, Double(value) / 128), "bucket of \(value) too wide")
        }
        XCTAssertEqual(LatencyHistogram.index(of: UInt64.max), LatencyHistogram.bucketCount - 1)
    }

    /// 1 µs … 10 ms, evenly: each percentile is the exact one within the bucket precision.
    func testPercentilesOfAKnownDistribution() throws {
        var histogram = LatencyHistogram()
        for microseconds in stride(from: UInt64(1), through: 10_000, by: 1) {
            histogram.record(nanoseconds: microseconds * 1000)
        }
        XCTAssertEqual(histogram.count, 10_000)
        for (fraction, exact) in [(0.5, 5_000_000.0), (0.9, 9_000_000.0), (0.99, 9_900_000.0)] {
            let value = Double(try XCTUnwrap(histogram.value(atFraction: fraction)))
            XCTAssertEqual(value, exact, accuracy: exact / 128, "p\(fraction * 100)")
        }
        XCTAssertEqual(histogram.value(atFraction: 1), 10_000_000)
        XCTAssertEqual(histogram.maximum, 10_000_000)
    }

    func testMergeAddsCountsAndKeepsTheLargestMaximum() {
        var slow = LatencyHistogram()
        var fast = LatencyHistogram()
        for _ in 0..<99 { fast.record(nanoseconds: 1_000) }
        slow.record(nanoseconds: 5_000_000)
        fast.merge(slow)
        XCTAssertEqual(fast.count, 100)
        XCTAssertEqual(Double(fast.value(atFraction: 0.5) ?? 0), 1_000, accuracy: 1_000 / 128)
        XCTAssertGreaterThan(fast.value(atFraction: 0.995) ?? 0, 4_900_000)
        XCTAssertEqual(fast.maximum, 5_000_000)
        XCTAssertNil(LatencyHistogram().value(atFraction: 0.5))
    }

    func testSummaryLineIsKeyValuePairs() {
        var figures = LoadFigures()
        figures.completed = 3
        figures.non2xx = 1
        figures.responses = 5
        figures.connections = 2
        figures.latency.record(nanoseconds: 1_500_000)
        figures.latency.record(nanoseconds: 2_000_000)
        let line = figures.summaryLine(seconds: 2)
        XCTAssertTrue(line.hasPrefix("completed=3 seconds=2.000 rps=1.0 p50_ms=1.5"), line)
        XCTAssertTrue(line.hasSuffix(" max_ms=2.000 errors=0 non2xx=1 responses=5 connections=2"), line)
        XCTAssertTrue(LoadFigures().summaryLine(seconds: 1).contains("p50_ms=n/a"))
        XCTAssertEqual(format(0.0005, decimals: 3), "0.001")
        XCTAssertEqual(format(12.25, decimals: 1), "12.3")
        XCTAssertEqual(format(7, decimals: 0), "7")
    }
}
