// libFuzzer entry point for TLSClientHelloParser (built by fuzz/run-tls-client-hello.sh together
// with the parser's sources, not part of the package).

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTLSClientHello(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = UnsafeBufferPointer(start: start, count: count)
    let result = TLSClientHelloParser.parse(bytes)
    if case .clientHello(let hello) = result, let name = hello.serverName {
        precondition(DNSHostName.validated(Array(name.utf8)[...]) == name, "server name '\(name)' is not a valid lowercased DNS name")
    }
    if result != .needMoreData, count > 0 {
        // A longer input never contradicts a complete answer; a prefix only ever waits or agrees.
        precondition(TLSClientHelloParser.parse(Array(bytes) + [0x16, 0x03]) == result, "more bytes changed the answer")
        let prefix = TLSClientHelloParser.parse(bytes.prefix(count / 2))
        precondition(prefix == .needMoreData || prefix == result, "a prefix contradicts the whole input")
    }
    // Fed in three pieces, the incremental reader agrees with the whole input.
    var reader = TLSClientHelloReader()
    reader.feed(bytes.prefix(count / 3))
    reader.feed(bytes[(count / 3)..<(2 * count / 3)])
    precondition(reader.feed(bytes[(2 * count / 3)...]) == result, "fed in pieces, the reader disagrees")
    _ = TLSClientHelloParser.looksLikeHTTP(bytes)
    return 0
}
