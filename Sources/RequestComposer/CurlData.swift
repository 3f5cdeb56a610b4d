import Foundation

/// Which `-d` family option gave a body part; each reads its value as curl does.
enum CurlDataKind: Equatable {
    /// `-d`, `--data`, `--data-ascii`: `@file` reads the file without its CR and LF bytes.
    case ascii
    /// `--data-raw`: the value as written, `@` included.
    case raw
    /// `--data-binary`: `@file` reads the file as it is.
    case binary
    /// `--data-urlencode`: `content`, `=content`, `name=content`, `@file`, `name@file`.
    case urlencode
}

/// Turns `-d` family values into body parts (curl joins them with `&`), reading `@file` through
/// the caller and `@-` from the only standard input import knows: our export's base64 pipe.
struct CurlData {
    let readFile: (String) throws -> [UInt8]
    /// What `printf '%s' BASE64 | base64 -d |` feeds curl; nil when nothing is piped in.
    let standardInput: [UInt8]?

    func part(_ kind: CurlDataKind, _ value: [UInt8], spelled: String, line: Int) throws(ComposeError) -> [UInt8] {
        switch kind {
        case .raw:
            return value
        case .ascii, .binary:
            guard value.first == UInt8(ascii: "@") else { return value }
            let contents = try read(Array(value.dropFirst()), spelled: spelled, line: line)
            return kind == .ascii ? contents.filter { $0 != 0x0D && $0 != 0x0A } : contents
        case .urlencode:
            guard let split = value.firstIndex(where: { $0 == UInt8(ascii: "=") || $0 == UInt8(ascii: "@") }) else {
                return Self.percentEncoded(value)
            }
            let name = Array(value[..<split])
            let content = value[split] == UInt8(ascii: "@")
                ? try read(Array(value[(split + 1)...]), spelled: spelled, line: line)
                : Array(value[(split + 1)...])
            return name.isEmpty ? Self.percentEncoded(content) : name + [UInt8(ascii: "=")] + Self.percentEncoded(content)
        }
    }

    private func read(_ name: [UInt8], spelled: String, line: Int) throws(ComposeError) -> [UInt8] {
        let fileName = String(decoding: name, as: UTF8.self)
        if fileName == "-" {
            guard let standardInput else {
                throw ComposeError(line: line, message: "\(spelled) @- reads standard input, which import does not have: put the body in the command or in a file")
            }
            return standardInput
        }
        guard !fileName.isEmpty else {
            throw ComposeError(line: line, message: "\(spelled) @ names no file: write @path/to/file")
        }
        do {
            return try readFile(fileName)
        } catch let error as ComposeError {
            throw ComposeError(line: error.line ?? line, message: error.message)
        } catch {
            throw ComposeError(line: line, message: "cannot read the file '\(HTTPSyntax.shown(fileName))' named by \(spelled) @\(HTTPSyntax.shown(fileName)): check the path and that it is readable")
        }
    }

    /// What `curl_easy_escape` produces: letters, digits and `-._~` kept, every other byte `%XX`
    /// (a space is `%20`, not `+`).
    static func percentEncoded(_ bytes: [UInt8]) -> [UInt8] {
        let hex = Array("0123456789ABCDEF".utf8)
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                 UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                output.append(byte)
            default:
                output += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return output
    }

    /// `Basic base64(user:password)`, as curl's `-u` sends it.
    static func basicAuthorization(_ credentials: [UInt8]) -> String {
        "Basic " + Data(credentials).base64EncodedString()
    }
}
