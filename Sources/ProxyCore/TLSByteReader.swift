/// A cursor over TLS wire bytes whose every read is checked: it returns nil instead of reading
/// past the end, so parsers built on it cannot trap on a length field that lies.
///
/// Concrete (`ArraySlice` and an index, no generic `Collection` calls): it runs per byte of
/// every ClientHello, and unspecialized generics cost metadata lookups per call.
struct TLSByteReader {
    private let bytes: ArraySlice<UInt8>
    private var position: Int

    init(_ bytes: ArraySlice<UInt8>) {
        self.bytes = bytes
        self.position = bytes.startIndex
    }

    var isEmpty: Bool { position == bytes.endIndex }

    /// How many bytes are left.
    var count: Int { bytes.endIndex - position }

    /// The bytes not read yet.
    var remainingBytes: ArraySlice<UInt8> { bytes[position...] }

    mutating func readUInt8() -> UInt8? {
        guard position < bytes.endIndex else { return nil }
        defer { position += 1 }
        return bytes[position]
    }

    mutating func readUInt16() -> UInt16? {
        guard count >= 2 else { return nil }
        defer { position += 2 }
        return UInt16(bytes[position]) << 8 | UInt16(bytes[position + 1])
    }

    /// The next `count` bytes, or nil (and nothing consumed) when fewer are left.
    mutating func readBytes(_ length: Int) -> ArraySlice<UInt8>? {
        guard length >= 0, length <= count else { return nil }
        defer { position += length }
        return bytes[position..<(position + length)]
    }

    /// A vector with a one-byte length prefix (`opaque x<0..2^8-1>`), as a reader of its own.
    mutating func readVector8() -> TLSByteReader? {
        guard count >= 1 else { return nil }
        let length = Int(bytes[position])
        guard length <= count - 1 else { return nil }
        position += 1
        return readBytes(length).map(TLSByteReader.init)
    }

    /// A vector with a two-byte length prefix (`opaque x<0..2^16-1>`), as a reader of its own.
    mutating func readVector16() -> TLSByteReader? {
        guard count >= 2 else { return nil }
        let length = Int(bytes[position]) << 8 | Int(bytes[position + 1])
        guard length <= count - 2 else { return nil }
        position += 2
        return readBytes(length).map(TLSByteReader.init)
    }
}
