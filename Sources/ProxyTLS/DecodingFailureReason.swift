/// A decoding error as one readable clause: swift-asn1 and swift-certificates errors describe
/// themselves as `ASN1Error.invalidPEMDocument: reason File.swift:140`; users need only the reason.
enum DecodingFailureReason {
    static func of(_ error: any Error) -> String {
        var words = "\(error)".split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        if let last = words.last, last.contains(".swift:") { words.removeLast() }
        if let first = words.first, first.hasSuffix(":"), first.contains("Error.") { words.removeFirst() }
        return words.isEmpty ? "\(error)" : words.joined(separator: " ")
    }
}
