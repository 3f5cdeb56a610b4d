import Foundation
import ProxyModel

/// Reads a HAR 1.2 file (Chrome DevTools, Firefox, Charles, mitmproxy, our own export) into flows
/// ready for the capture store.
///
/// All or nothing: the whole document is decoded and every entry mapped before anything is
/// returned, so a caller that stores the result in one transaction leaves the store untouched
/// when a file is bad. Errors carry the JSON path of the offending field.
public enum HARReader {
    /// The flows of `data`, in the file's entry order, each with `id` nil. Bytes that are not
    /// UTF-8 are read as U+FFFD.
    public static func flows(from data: Data) throws(HARImportError) -> [Flow] {
        let document: HARInput.Document
        do {
            document = try JSONDecoder().decode(HARInput.Document.self, from: data)
        } catch {
            // Some tools write a stray Latin-1 byte into a header value; JSON must be UTF-8 and
            // Foundation refuses the whole file without a position. Such bytes become U+FFFD and
            // the file is read again (checked only after a failure: valid files pay nothing).
            guard String(validating: data, as: UTF8.self) == nil else {
                throw HARDecodingFailure.importError(for: error, in: data)
            }
            let repaired = Data(String(decoding: data, as: UTF8.self).utf8)
            do {
                document = try JSONDecoder().decode(HARInput.Document.self, from: repaired)
            } catch {
                throw HARDecodingFailure.importError(for: error, in: repaired)
            }
        }
        var flows: [Flow] = []
        flows.reserveCapacity(document.log.entries.count)
        for (index, entry) in document.log.entries.enumerated() {
            flows.append(try HARFlowMapper.flow(from: entry, index: index))
        }
        return flows
    }
}
