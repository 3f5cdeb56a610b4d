import ArgumentParser
import ControlChannel
import Foundation
import ProxyModel
import RequestComposer

/// `proxyapp send FILE|-`: sends a raw HTTP request a person wrote through the engine (the
/// running proxy's, or one of its own) and prints the response; the exchange is captured.
struct SendCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "send",
        abstract: "Send a raw HTTP request from a file through the proxy and print the response.",
        discussion: """
            The file holds a request line (METHOD URL [HTTP/1.1]), header lines, a blank line and the body, as \
            `proxyapp export --raw` prints a request. The URL is absolute (https://host/path), or a path with --to URL. \
            Content-Length is computed; a body is encoded again when its Content-Encoding header is kept. \
            Lines starting with # before the request line are comments.
            """)

    @Argument(help: ArgumentHelp("The request to send ('-' for stdin).", valueName: "FILE"))
    var file: String

    @Option(help: ArgumentHelp("The origin of a request written with a path only (https://api.example.com).", valueName: "URL"))
    var to: String?

    @Flag(help: "Forward the request as it is: no rule applies.")
    var noRules = false

    @Flag(help: "Print the response head only, not its body.")
    var headOnly = false

    @OptionGroup var engine: LocalEngineOptions

    func run() async throws {
        let text = try ComposedInput.read(file, what: "request")
        let request: ComposedRequest
        do {
            request = try RequestText.parse(text, defaultOrigin: to)
        } catch let error as ComposeError {
            throw CLIError("\(file == "-" ? "the request on stdin" : file) is not a request ProxyApp can send: "
                           + TerminalText.escaped(error.description))
        }
        try await ComposedSend.send(request, noRules: noRules, headOnly: headOnly, options: engine)
    }
}

/// Reading what a person wrote: a file or stdin, bounded, as text.
enum ComposedInput {
    /// More than any request a person writes by hand; bodies beyond it go in with `--data-binary @file`.
    static let maximumBytes = 64 << 20

    static func read(_ path: String, what: String) throws -> String {
        let handle: FileHandle
        if path == "-" {
            handle = .standardInput
        } else {
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue else {
                throw CLIError("no file at \(path). Give the path of a file holding the \(what) (or '-' to read stdin).")
            }
            guard let opened = FileHandle(forReadingAtPath: path) else {
                throw CLIError("cannot read \(path): check its permissions.")
            }
            handle = opened
        }
        defer { if path != "-" { try? handle.close() } }
        let bytes = (try? handle.read(upToCount: maximumBytes + 1)) ?? Data()
        guard bytes.count <= maximumBytes else {
            throw CLIError("\(path == "-" ? "stdin" : path) is over \(maximumBytes >> 20) MiB: too large for a \(what) written by hand.")
        }
        guard let text = String(data: bytes, encoding: .utf8) else {
            throw CLIError("\(path == "-" ? "stdin" : path) is not UTF-8 text: write the \(what) as text "
                           + "(a binary body goes in with curl's --data-binary @file and `proxyapp import --curl`).")
        }
        return text
    }
}

/// Sends one composed request through the data directory's proxy (or an engine of its own)
/// and prints what came back: the response head and body on stdout, a summary on stderr.
enum ComposedSend {
    static func send(_ request: ComposedRequest, noRules: Bool, headOnly: Bool, options: LocalEngineOptions) async throws {
        if request.insecure {
            StandardError.print("note: -k/--insecure is not applied: the origin's certificate is checked as the proxy is "
                                + "configured (run the proxy with --insecure-upstream to skip that)")
        }
        let message = ControlHTTPRequest(method: request.method, url: request.url,
                                         headers: request.headers.map { ($0.name, $0.value) }, body: request.body)
        let reply = try await LocalEngine.perform(ControlRequest(command: "send", noRules: noRules, request: message),
                                                  options: options)
        guard reply.ok, let status = reply.status else {
            throw CLIError(TerminalText.escaped(reply.error ?? "the request got no answer"))
        }
        var head = "HTTP/1.1 \(status) \(reply.reason ?? "")\r\n"
        for pair in reply.responseHeaders ?? [] where pair.count == 2 {
            head += "\(pair[0]): \(pair[1])\r\n"
        }
        head += "\r\n"
        let body = headOnly ? [] : Data(base64Encoded: reply.responseBody ?? "").map { [UInt8]($0) } ?? []
        for line in reply.lines { StandardError.print(line) }
        guard isatty(STDOUT_FILENO) == 1 else {
            FileHandle.standardOutput.write(Data(Array(head.utf8) + body))
            return
        }
        // A terminal never gets traffic's control bytes, nor a binary body (it would garble it).
        var text = TerminalText.escaped(head, keepingLineBreaks: true)
        if let bodyText = String(validating: body, as: UTF8.self) {
            text += TerminalText.escaped(bodyText, keepingLineBreaks: true)
        } else {
            StandardError.print("(the body is \(body.count) bytes of binary or compressed data: redirect stdout to a file to keep it)")
        }
        FileHandle.standardOutput.write(Data(text.utf8))
    }
}
