@testable import ProxyCore

/// Requests, routes and header fields the exchange machine's tests share.
enum ExchangeFixtures {
    typealias Machine = ExchangeStateMachine
    typealias Fields = [(name: String, value: String)]

    static func request(_ method: String = "GET", majorVersion: Int = 1, minorVersion: Int = 1, keepAlive: Bool = true,
                        expectsContinue: Bool = false, asksUpgrade: Bool = false) -> Machine.Request {
        Machine.Request(method: method, majorVersion: majorVersion, minorVersion: minorVersion, keepAlive: keepAlive,
                        expectsContinue: expectsContinue, asksUpgrade: asksUpgrade)
    }

    static let get = request()
    static let post = request("POST")
    static let origin = Machine.Forwarding(host: "origin.test", port: 80)
    static let lengthFields: Fields = [(name: "Content-Length", value: "5")]
    static let noFields: Fields = []
}
