import FlowExport
import Foundation
import ProxyModel
import TerminalUI

/// What `y` copies from a flow, decided without I/O: the URL, the curl command and the raw
/// request exactly as the exporters write them (`CurlCommand`, `RawExchange`), and the response
/// body decoded as the detail view shows it. Refused, with the reason, when there is nothing to
/// copy or the text could do harm when pasted: binary bytes, or control characters (a pasted ESC
/// or CR would act in the user's terminal), and a tunnel has no request to repeat.
enum ClipboardText {
    enum Kind: Sendable, CaseIterable {
        case url, curl, responseBody, rawRequest

        /// The key after `y`.
        init?(key: Key) {
            switch key {
            case .character("u"): self = .url
            case .character("c"): self = .curl
            case .character("b"): self = .responseBody
            case .character("r"): self = .rawRequest
            default: return nil
            }
        }

        func name(of id: Int64) -> String {
            switch self {
            case .url: "the URL of flow #\(id)"
            case .curl: "the curl command of flow #\(id)"
            case .responseBody: "the response body of flow #\(id)"
            case .rawRequest: "the raw request of flow #\(id)"
            }
        }
    }

    /// The bytes to copy and how the status line names them, or why not (one line).
    static func make(_ kind: Kind, of flow: Flow) -> Result<(bytes: [UInt8], what: String), Refusal> {
        let id = flow.id ?? 0
        let bytes: [UInt8]
        switch kind {
        case .url:
            bytes = Array((flow.kind == .tunnel ? "\(flow.urlHost):\(flow.port)" : flow.url).utf8)
        case .curl:
            guard CurlCommand.isReproducible(flow) else {
                return .failure(Refusal("flow #\(id) is a CONNECT tunnel: there is no HTTP request to copy as curl"))
            }
            bytes = Array(CurlCommand.render(flow).utf8)
        case .responseBody:
            guard flow.status != nil, !flow.responseBody.bytes.isEmpty else {
                return .failure(Refusal("flow #\(id) has no response body to copy"))
            }
            bytes = BodyDocument(body: flow.responseBody, headers: flow.responseHeaders).bytes
        case .rawRequest:
            guard flow.kind == .http else {
                return .failure(Refusal("flow #\(id) is a CONNECT tunnel: its bytes were not decrypted"))
            }
            bytes = RawExchange.request(flow)
        }
        if let problem = pasteProblem(bytes) {
            return .failure(Refusal("\(kind.name(of: id)) \(problem): not copied (e exports HAR, `proxyapp export --raw \(id)` shows it)"))
        }
        let truncated = kind == .responseBody && flow.responseBody.truncated
        return .success((bytes, kind.name(of: id) + (truncated ? " (truncated when captured)" : "")))
    }

    /// Why `bytes` must not be pasted as text: not UTF-8, or control characters other than tab,
    /// line feed and the CR of a CRLF (a raw request's line ends).
    static func pasteProblem(_ bytes: [UInt8]) -> String? {
        guard let text = String(validating: bytes, as: UTF8.self) else { return "is binary (not UTF-8 text)" }
        var previous: Unicode.Scalar?
        for scalar in text.unicodeScalars {
            defer { previous = scalar }
            if scalar == "\t" || scalar == "\n" { continue }
            if previous == "\r" { return "holds control characters" }  // a CR not before LF
            if scalar == "\r" { continue }
            if TerminalText.isUnsafe(scalar) { return "holds control characters" }
        }
        return previous == "\r" ? "holds control characters" : nil
    }

    /// A copy refused, and why.
    struct Refusal: Error, Equatable {
        var reason: String
        init(_ reason: String) { self.reason = reason }
    }
}
