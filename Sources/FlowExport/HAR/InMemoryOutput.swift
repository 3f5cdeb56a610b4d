/// A `ByteOutput` that keeps everything in memory: one HAR entry rendered on a worker thread
/// (`HARWriter.write(contentsOf:)`) before it is copied into the document in order.
final class InMemoryOutput: ByteOutput {
    private(set) var bytes: [UInt8] = []

    func write(_ bytes: UnsafeRawBufferPointer) {
        self.bytes.append(contentsOf: bytes)
    }

    func flush() {}
}
