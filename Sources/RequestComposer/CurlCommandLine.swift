import Foundation
import ProxyModel

/// Imports a curl command line, so a request copied from a browser ("Copy as cURL"), from API
/// documentation or from our own export can be sent through the proxy and edited.
///
/// What it reads: Chrome's bash form (`$'…'` bodies, `-b` cookies), Firefox's form (`-H 'Cookie: …'`,
/// `--data-raw`), our export (`--data-binary`, `"$proxyapp_nl"`, the base64 pipe), shell quoting and
/// continuations (`ShellWords`), and `curl` called by a path. What it builds is what curl would send,
/// header by header, in command order: `-A`, `-e`, `-b` and `-u` add their header where they are
/// written unless a `-H` of the same name is given (as curl lets `-H` win); `-H 'Name:'` only stops
/// such a header or default; a `-d` body without `Content-Type` gets curl's
/// `application/x-www-form-urlencoded`; `--compressed` adds `Accept-Encoding: gzip, deflate, br, zstd`
/// when none is given. `Content-Length` and `Transfer-Encoding` are dropped (the proxy frames).
/// Not carried: curl's own defaults (`User-Agent: curl/…`, `Accept: */*`) and `-L` (the proxy does
/// not follow redirects for a composed request); the full option list is `CurlOption`.
public enum CurlCommandLine {
    /// Parses `commandLine`; `readFile` is called for `-d @file`, `--data-binary @file` and
    /// `--data-urlencode name@file` (never for `--data-raw`). An error `readFile` throws is reported
    /// naming the file (a `ComposeError` it throws is passed on as it is).
    public static func parse(_ commandLine: String, readFile: (String) throws -> [UInt8]) throws -> ComposedRequest {
        let command = try CurlInvocation(ShellWords.split(commandLine))
        let arguments = try CurlArgumentReader(command.arguments)
        return try withoutActuallyEscaping(readFile) { readFile in
            var builder = CurlRequestBuilder(data: CurlData(readFile: readFile, standardInput: command.standardInput))
            for argument in arguments.arguments {
                try builder.apply(argument)
            }
            return try builder.finish(urls: arguments.urls)
        }
    }
}

/// The one curl command in a pasted text, its arguments and what is piped into it.
private struct CurlInvocation {
    var arguments: ArraySlice<ShellWords.Word>
    var standardInput: [UInt8]?

    init(_ tokens: [ShellWords.Token]) throws(ComposeError) {
        var commands: [[ShellWords.Token]] = [[]]
        for token in tokens {
            if case .end = token { commands.append([]) } else { commands[commands.count - 1].append(token) }
        }
        commands.removeAll { $0.isEmpty }
        guard let command = commands.first else {
            throw ComposeError(message: "the command line is empty: paste a curl command")
        }
        if commands.count > 1 {
            throw ComposeError(line: Self.line(of: commands[1][0]),
                               message: "the text holds more than one command: import one curl command at a time")
        }
        var segments: [[ShellWords.Word]] = [[]]
        for token in command {
            switch token {
            case .word(let word): segments[segments.count - 1].append(word)
            case .pipe(let line):
                guard !segments[segments.count - 1].isEmpty else {
                    throw ComposeError(line: line, message: "a '|' has no command before it: remove it")
                }
                segments.append([])
            case .end: break
            }
        }
        let curl = segments[segments.count - 1]
        guard let program = curl.first else {
            throw ComposeError(line: Self.line(of: command[command.count - 1]), message: "a '|' has no command after it: remove it")
        }
        if segments.count == 3 {
            standardInput = try Self.exportPipe(segments[0], segments[1])
        } else if segments.count != 1 {
            throw Self.pipeError(line: program.line)
        }
        let name = program.text
        guard name == "curl" || name.hasSuffix("/curl") else {
            throw ComposeError(line: program.line, message: "the command is '\(HTTPSyntax.shown(name))', not curl: paste a curl command")
        }
        arguments = curl[1...]
    }

    /// `printf '%s' BASE64 | base64 -d |`, as `CurlCommand` writes a binary body.
    private static func exportPipe(_ printf: [ShellWords.Word], _ decode: [ShellWords.Word]) throws(ComposeError) -> [UInt8] {
        guard printf.count == 3, printf[0].text == "printf", printf[1].text == "%s",
              decode.count == 2, decode[0].text == "base64", decode[1].text == "-d" || decode[1].text == "--decode" else {
            throw pipeError(line: printf[0].line)
        }
        guard let data = Data(base64Encoded: printf[2].text) else {
            throw ComposeError(line: printf[2].line, message: "the base64 text piped into curl does not decode: copy the command again")
        }
        return Array(data)
    }

    private static func pipeError(line: Int) -> ComposeError {
        ComposeError(line: line, message: "only ProxyApp's own pipe (printf '%s' BASE64 | base64 -d | curl …) can feed curl: remove the other commands")
    }

    private static func line(of token: ShellWords.Token) -> Int {
        switch token {
        case .word(let word): return word.line
        case .pipe(let line), .end(let line): return line
        }
    }
}
