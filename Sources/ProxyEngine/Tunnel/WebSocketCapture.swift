import BodyCodec
import Foundation
import NIOCore
import ProxyCore
import ProxyModel

/// Captures the messages of a relayed WebSocket: reads a copy of each side's bytes with a
/// `WebSocketFrameReader` and hands the messages to the capture under the flow of the upgrade
/// (`FlowSink.append(_:to:)`), then the flow's byte counts when both sides closed.
///
/// The relay itself is untouched: the bytes go on whatever the readers make of them, and a
/// stream that stops parsing (a framing violation, an extension not understood) stops only
/// its capture, with a note on the flow. Messages are handed over once per read (or every
/// `batchSize` messages), so a chatty socket costs the writer one queue item per read, not per
/// message. Payloads are kept up to the capture's body limit per direction; past it messages
/// are still counted with their sizes.
///
/// Lives on the relay's event loop (both channels share it); not thread-safe.
final class WebSocketCapture: RelayObserver {
    static let batchSize = 64

    private var up: WebSocketFrameReader
    private var down: WebSocketFrameReader
    private let key: OpenFlowKey
    private let sink: any FlowSink
    private var pending: [CapturedMessage] = []
    private var truncatedPayloads = false
    /// Close messages seen each way: after both, the WebSocket ended as it should whatever the
    /// transport does next (a TCP reset, a TLS connection closed without close_notify).
    private var closeSent = false
    private var closeReceived = false
    private var notes: [String] = []
    /// What was wrong with some messages' content (invalid UTF-8, a payload that did not
    /// inflate), each said once on the flow.
    private var issues: [String] = []

    /// - Parameters:
    ///   - payloadBudget: payload bytes kept per direction (`--max-body-size`).
    ///   - extensions: the `Sec-WebSocket-Extensions` the server answered, which decides whether
    ///     messages may be compressed and how to inflate them.
    ///   - makeInflater: an inflater for one direction's permessage-deflate parameters.
    init(key: OpenFlowKey, sink: any FlowSink, payloadBudget: Int, extensions: String?,
         makeInflater: (WebSocketDeflateParameters, WebSocketDirection) -> (any WebSocketPayloadInflating)?) {
        self.key = key
        self.sink = sink
        var upCompression = WebSocketFrameReader.Compression.none
        var downCompression = WebSocketFrameReader.Compression.none
        switch WebSocketDeflateParameters.negotiated(fromResponseHeader: extensions) {
        case .none:
            break
        case .permessageDeflate(let parameters):
            upCompression = .permessageDeflate(inflater: makeInflater(parameters, .clientToServer))
            downCompression = .permessageDeflate(inflater: makeInflater(parameters, .serverToClient))
        case .malformed(let reason):
            notes.append("WebSocket extensions not understood (\(reason)): compressed messages are kept as sent")
            upCompression = .permessageDeflate(inflater: nil)
            downCompression = .permessageDeflate(inflater: nil)
        }
        up = WebSocketFrameReader(direction: .clientToServer, payloadBudget: payloadBudget, compression: upCompression)
        down = WebSocketFrameReader(direction: .serverToClient, payloadBudget: payloadBudget, compression: downCompression)
    }

    func observe(_ buffer: ByteBuffer, direction: TunnelMeter.Direction) {
        let messages = buffer.readableBytesView.withContiguousStorageIfAvailable { bytes in
            direction == .up ? up.feed(bytes) : down.feed(bytes)
        } ?? (direction == .up ? up.feed(Array(buffer.readableBytesView)) : down.feed(Array(buffer.readableBytesView)))
        guard !messages.isEmpty else { return }
        let now = Date()
        for message in messages {
            pending.append(Self.captured(message, at: now))
            if message.isPayloadTruncated { truncatedPayloads = true }
            if let issue = message.issue?.description, issues.count < 8, !issues.contains(issue) { issues.append(issue) }
            if message.opcode == .close {
                if message.direction == .clientToServer { closeSent = true } else { closeReceived = true }
            }
        }
        if pending.count >= Self.batchSize { handOver() }
    }

    func readComplete() {
        handOver()
    }

    /// Both sides closed: what is left goes to the capture, then the flow's counts and notes.
    /// A transport error after the closing handshake is not the WebSocket's failure.
    func finish(bytesUp: Int64, bytesDown: Int64, error: String?) {
        let error = closeSent && closeReceived ? nil : error
        for (name, failure) in [("client", up.failure ?? up.finish()), ("server", down.failure ?? down.finish())] {
            if let failure { notes.append("\(name) messages not captured past a problem: \(failure)") }
        }
        handOver()
        notes += issues.map { "a message: \($0)" }
        if truncatedPayloads {
            notes.append("some message payloads were not kept: over the capture's body limit (--max-body-size)")
        }
        sink.finish(key, with: OpenFlowEnd(finishedAt: Date(), bytesUp: bytesUp, bytesDown: bytesDown, error: error,
                                           note: notes.isEmpty ? nil : notes.joined(separator: "; ")))
    }

    private func handOver() {
        guard !pending.isEmpty else { return }
        sink.append(pending, to: key)
        pending.removeAll(keepingCapacity: true)
    }

    /// zlib's inflater for one direction's negotiated parameters.
    static func inflater(for parameters: WebSocketDeflateParameters,
                         direction: WebSocketDirection) -> (any WebSocketPayloadInflating)? {
        WebSocketInflater(windowBits: parameters.windowBits(for: direction),
                          contextTakeover: parameters.contextTakeover(for: direction))
    }

    static func captured(_ message: WebSocketMessage, at time: Date) -> CapturedMessage {
        let kind: CapturedMessage.Kind
        switch message.opcode {
        case .text: kind = .text
        case .binary: kind = .binary
        case .close: kind = .close
        case .ping: kind = .ping
        case .pong: kind = .pong
        }
        return CapturedMessage(
            direction: message.direction == .clientToServer ? .sent : .received, time: time, kind: kind,
            payload: Data(message.payload), size: Int64(message.payloadSize ?? message.wireSize),
            truncated: message.isPayloadTruncated, compressed: message.isCompressed,
            closeCode: message.closeCode.map(Int.init), closeReason: message.closeReason)
    }
}

/// BodyCodec's zlib inflater has exactly the methods ProxyCore's reader needs.
extension WebSocketInflater: WebSocketPayloadInflating {}
