import CZlib

/// A `QRCode` as a PNG image (8-bit greyscale, `scale` pixels per module, a light quiet zone of
/// `quietZone` modules), written with zlib: what `proxyapp qr --png FILE` saves.
public enum QRCodePNG {
    public static func data(_ code: QRCode, scale: Int = 8, quietZone: Int = 4) throws(QRCode.EncodingError) -> [UInt8] {
        let scale = max(1, min(scale, 64))
        let side = (code.size + 2 * quietZone) * scale
        // Each row: filter type 0, then one byte per pixel (0 dark, 255 light).
        var raw = [UInt8]()
        raw.reserveCapacity((side + 1) * side)
        for y in 0..<side {
            raw.append(0)
            let row = y / scale - quietZone
            for x in 0..<side {
                raw.append(code.isDark(row: row, column: x / scale - quietZone) ? 0 : 255)
            }
        }
        var header = [UInt8]()
        header += bigEndian(UInt32(side)) + bigEndian(UInt32(side))
        header += [8, 0, 0, 0, 0]  // bit depth 8, greyscale, deflate, no filter method, no interlace
        return [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
            + chunk("IHDR", header) + chunk("IDAT", try deflate(raw)) + chunk("IEND", [])
    }

    private static func chunk(_ type: String, _ body: [UInt8]) -> [UInt8] {
        let typeAndBody = Array(type.utf8) + body
        let crc = typeAndBody.withUnsafeBufferPointer { crc32(0, $0.baseAddress, uInt($0.count)) }
        return bigEndian(UInt32(body.count)) + typeAndBody + bigEndian(UInt32(truncatingIfNeeded: crc))
    }

    private static func deflate(_ bytes: [UInt8]) throws(QRCode.EncodingError) -> [UInt8] {
        var length = compressBound(uLong(bytes.count))
        var output = [UInt8](repeating: 0, count: Int(length))
        let status = output.withUnsafeMutableBufferPointer { out in
            bytes.withUnsafeBufferPointer { compress2(out.baseAddress, &length, $0.baseAddress, uLong($0.count), 9) }
        }
        guard status == Z_OK else { throw QRCode.EncodingError(description: "zlib could not compress the image (status \(status))") }
        return Array(output.prefix(Int(length)))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }
}
