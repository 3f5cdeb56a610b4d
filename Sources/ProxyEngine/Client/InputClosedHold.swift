import NIOCore

/// Holds back the client's end of input while the HTTP decoder is leaving the pipeline, so the
/// bytes it read past a CONNECT reach the handler that replaces it.
///
/// The decoder leaves on the next loop tick; a FIN read before then would make it decode its
/// last bytes as HTTP and drop them. Added in front of the decoder by
/// `ClientPipelineSetup.replaceHTTPHandlers`; `release` passes a held event on and removes it.
final class InputClosedHold: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = NIOAny

    private var held = false
    private var context: ChannelHandlerContext?

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        self.context = nil
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case ChannelEvent.inputClosed = event {
            held = true
            return
        }
        context.fireUserInboundEventTriggered(event)
    }

    /// Leaves the pipeline, passing on an end of input that arrived meanwhile (no-op once gone).
    func release() {
        guard let context else { return }
        if held {
            held = false
            context.fireUserInboundEventTriggered(ChannelEvent.inputClosed)
        }
        context.pipeline.syncOperations.removeHandler(context: context, promise: nil)
    }
}
