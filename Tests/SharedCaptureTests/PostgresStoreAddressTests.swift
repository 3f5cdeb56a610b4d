import SharedCapture
import XCTest

final class PostgresStoreAddressTests: XCTestCase {
    func testParsesTheFormsLibpqUsersWrite() throws {
        let full = try PostgresStoreAddress(parsing: "postgres://qa:s%40cr%3At@db.lab.test:6543/captures?sslmode=require")
        XCTAssertEqual(full, PostgresStoreAddress(host: "db.lab.test", port: 6543, user: "qa", password: "s@cr:t",
                                                  database: "captures", tls: .require))
        let bare = try PostgresStoreAddress(parsing: "postgresql://qa@10.0.0.5")
        XCTAssertEqual(bare, PostgresStoreAddress(host: "10.0.0.5", port: 5432, user: "qa", database: "qa", tls: .prefer))
        let six = try PostgresStoreAddress(parsing: "POSTGRES://qa:pw@[::1]:5433/db?sslmode=verify-full")
        XCTAssertEqual(six.host, "::1")
        XCTAssertEqual(six.port, 5433)
        XCTAssertEqual(six.tls, .verifyFull)
        XCTAssertEqual(six.redacted, "postgres://qa:***@[::1]:5433/db?sslmode=verify-full")
    }

    func testRefusesWhatItCannotUseWithTheProblemNamed() {
        let cases: [(String, String)] = [
            ("mysql://qa@db/x", "is not a postgres:// URL"),
            ("postgres://db.lab.test/x", "names no user"),
            ("postgres://qa@/x", "names no host"),
            ("postgres://qa@db:0/x", "not between 1 and 65535"),
            ("postgres://qa@db:99999/x", "port"),
            ("postgres://qa@db/x?application_name=a", "parameter 'application_name' is not supported"),
            ("postgres://qa@db/x?sslmode=allow", "sslmode 'allow' is not one of disable, prefer, require, verify-full"),
            ("postgres://qa@db/x y", "space or a control character"),
            ("postgres://qa@db/x\u{0}", "space or a control character"),
            ("postgres://qa@db/a/b", "contains a slash"),
            ("postgres://qa@db/" + String(repeating: "x", count: 5000), "longer than 4,096 bytes"),
            ("postgres://q%zz@db/x", "percent-escape"),
        ]
        for (text, expected) in cases {
            XCTAssertThrowsError(try PostgresStoreAddress(parsing: text), text) { error in
                let message = "\(error)"
                XCTAssertTrue(message.hasPrefix("--store: "), message)
                XCTAssertTrue(message.contains(expected), "\(text): \(message)")
                XCTAssertTrue(message.contains("postgres://USER:PASSWORD@HOST:PORT/DATABASE"), message)
            }
        }
    }

    func testNeverShowsThePassword() throws {
        let address = try PostgresStoreAddress(parsing: "postgres://qa:hunter2@db/x")
        XCTAssertFalse(address.redacted.contains("hunter2"))
        XCTAssertEqual(address.redacted, "postgres://qa:***@db:5432/x")
        // A URL that does not parse is named in the error without its password either.
        XCTAssertThrowsError(try PostgresStoreAddress(parsing: "mysql://qa:hunter2@db/x")) { error in
            XCTAssertFalse("\(error)".contains("hunter2"), "\(error)")
        }
    }
}
