import Foundation
import XCTest

@testable import CaptureStore

/// Bodies and names shared by the body-file tests.
extension XCTestCase {
    /// `count` bytes that differ with `seed` and repeat only after long runs.
    func bodyPattern(_ count: Int, seed: Int) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ seed &+ $0 >> 11) })
    }

    /// The name `BodyFileStore` gives a file holding `bytes`.
    func contentName(_ bytes: Data) -> String {
        let hasher = BodyContentHasher()
        hasher.update(bytes)
        return hasher.name()
    }
}
