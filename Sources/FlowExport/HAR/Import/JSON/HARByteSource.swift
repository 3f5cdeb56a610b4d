import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the bytes of a HAR file come from, a chunk at a time, so an import never holds the file:
/// a file descriptor (a file, a pipe, stdin) or memory (tests, callers that already hold it).
public protocol HARByteSource: AnyObject {
    /// Fills the start of `buffer`; returns how many bytes, 0 at the end of the input.
    func read(into buffer: UnsafeMutableRawBufferPointer) throws(HARReadError) -> Int
}

/// The input could not be read (an I/O error, not a problem with the file's content).
public struct HARReadError: Error, CustomStringConvertible, Sendable {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

/// Reads an open file descriptor to its end; does not close it.
public final class FileDescriptorSource: HARByteSource {
    private let descriptor: Int32

    public init(descriptor: Int32) {
        self.descriptor = descriptor
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(HARReadError) -> Int {
        while true {
            #if canImport(Glibc)
            let count = Glibc.read(descriptor, buffer.baseAddress, buffer.count)
            #else
            let count = Darwin.read(descriptor, buffer.baseAddress, buffer.count)
            #endif
            if count >= 0 { return count }
            guard errno == EINTR else { throw HARReadError(String(cString: strerror(errno))) }
        }
    }
}

/// Bytes already in memory, handed out in chunks of at most `chunkSize` (tests pass 1 to put a
/// chunk boundary everywhere).
public final class MemorySource: HARByteSource {
    private let data: Data
    private var offset: Int
    private let chunkSize: Int

    public init(_ data: Data, chunkSize: Int = .max) {
        self.data = data
        self.offset = data.startIndex
        self.chunkSize = max(1, chunkSize)
    }

    public func read(into buffer: UnsafeMutableRawBufferPointer) throws(HARReadError) -> Int {
        let count = min(buffer.count, chunkSize, data.endIndex - offset)
        guard count > 0 else { return 0 }
        data.copyBytes(to: buffer.bindMemory(to: UInt8.self).baseAddress!, from: offset..<offset + count)
        offset += count
        return count
    }
}
