import Foundation
import NIOCore
import NIOEmbedded
import ProxyModel
@testable import EngineTestSupport
@testable import ProxyEngine

/// libFuzzer entry point for the proxy's request path: random bytes in as one client
/// connection (the real client pipeline, in memory), what the proxy forwards out checked with
/// `StrictRequestParser`, an HTTP/1.1 parser independent of NIO's. Bytes relayed through a
/// CONNECT tunnel are the client's own and are not checked.
///
/// Traps (a crash for libFuzzer) when the forwarded bytes do not parse strictly (ambiguous
/// framing reached an origin), when a forwarded request lacks its one Host or has more than one
/// framing header, when the requests answered differ in number from the flows recorded with that
/// answer (a request nobody captured: smuggled), or when a forwarded body differs from the body
/// its flow recorded. The origin answers each forwarded request with an empty 200, so pipelined
/// requests proceed.
@_cdecl("LLVMFuzzerTestOneInput")
public func requestPathFuzzTest(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let input = Array(UnsafeBufferPointer(start: data, count: size))
    let harness: EngineHarness
    do { harness = try EngineHarness() } catch { fatalError("harness: \(error)") }
    try? harness.client.writeInbound(ByteBuffer(bytes: input))
    harness.loop.run()
    try? harness.client.close().wait()
    harness.loop.run()

    var streams: [ObjectIdentifier: (bytes: [UInt8], answered: Int)] = [:]
    var answered: [StrictRequestParser.Request] = []
    for _ in 0..<64 {  // each round answers at least one new request, or stops
        var progressed = false
        // Only HTTP upstream connections: a CONNECT tunnel's bytes are the client's own, relayed.
        let httpChannels = zip(harness.connector.connects, harness.connector.channels)
            .filter { $0.0.kind == .http }.map(\.1)
        for channel in httpChannels {
            let key = ObjectIdentifier(channel)
            var stream = streams[key] ?? ([], 0)
            while let data = try? channel.readOutbound(as: IOData.self) {
                if case .byteBuffer(let buffer) = data { stream.bytes += Array(buffer.readableBytesView) }
            }
            let (requests, error, _) = StrictRequestParser.parseAll(stream.bytes)
            if let error { fatalError("the proxy forwarded bytes a strict origin refuses: \(error)") }
            while stream.answered < requests.count, channel.isActive {
                let request = requests[stream.answered]
                stream.answered += 1
                check(request)
                answered.append(request)
                try? channel.writeInbound(ByteBuffer(string: "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
                harness.loop.run()
                progressed = true
            }
            streams[key] = stream
        }
        if !progressed { break }
    }
    let recorded = harness.sink.flows.filter { $0.kind == .http && $0.status == 200 }
    if recorded.count != answered.count {
        fatalError("\(answered.count) requests reached the origin and were answered, \(recorded.count) flows say so")
    }
    for (request, flow) in zip(answered, recorded) where !flow.requestBody.truncated {
        if Array(flow.requestBody.bytes) != request.body {
            fatalError("the origin got a body of \(request.body.count) bytes, the flow recorded \(flow.requestBody.bytes.count)")
        }
    }
    return 0
}

/// One Host, at most one framing header, nothing framing or routing in trailers.
private func check(_ request: StrictRequestParser.Request) {
    if request.values("host").count != 1 { fatalError("forwarded without exactly one Host") }
    if request.values("content-length").count + request.values("transfer-encoding").count > 1 {
        fatalError("forwarded with more than one framing header")
    }
    for trailer in request.trailers where ["content-length", "transfer-encoding", "host"].contains(trailer.name.lowercased()) {
        fatalError("forwarded a \(trailer.name) trailer")
    }
}
