import ProxyModel

/// Gathers curl's options into a `ComposedRequest` as curl would build the request: see
/// `CurlCommandLine` for the header rules it follows.
struct CurlRequestBuilder {
    /// A header to send: a `-H` one as written, or a slot for the header an option makes (`-A`,
    /// `-e`, `-b`, `-u`), filled at the end, so a repeated option costs no search.
    private enum Entry {
        case given(HeaderField)
        case option(String)
    }

    let data: CurlData
    private var method: String?
    private var entries: [Entry] = []
    /// The value of each option-made header, by its name; `-b` values are joined at the end.
    private var optionValues: [String: String] = [:]
    private var cookies: [String] = []
    /// Lower-cased names of the `-H` headers, which replace option-made ones.
    private var givenNames: Set<String> = []
    /// Lower-cased names given as `-H 'Name:'`.
    private var removed: Set<String> = []
    private var dataParts: [[UInt8]] = []
    private var dataLine = 0
    private var urlOptions: [ShellWords.Word] = []
    private var compressed = false
    private var insecure = false
    private var get = false
    private var head = false
    private var httpVersion = "HTTP/1.1"

    init(data: CurlData) {
        self.data = data
    }

    mutating func apply(_ argument: CurlArgument) throws(ComposeError) {
        let line = argument.line
        let bytes = argument.value?.bytes ?? []
        switch argument.option {
        case .request:
            let text = try Self.text(bytes, what: "the method given to \(argument.spelled)", line: line)
            guard HTTPSyntax.isToken(text) else {
                throw ComposeError(line: line, message: "the method '\(HTTPSyntax.shown(text))' given to \(argument.spelled) is not an HTTP token: use a name like GET or POST")
            }
            method = text
        case .header:
            try addHeader(bytes, spelled: argument.spelled, line: line)
        case .userAgent:
            try setOptionHeader("User-Agent", Self.text(bytes, what: "the \(argument.spelled) value", line: line), line: line)
        case .referer:
            var referer = try Self.text(bytes, what: "the \(argument.spelled) value", line: line)
            if referer.hasSuffix(";auto") { referer.removeLast(5) }
            try setOptionHeader("Referer", referer, line: line)
        case .cookie:
            let cookie = try Self.text(bytes, what: "the \(argument.spelled) value", line: line)
            guard cookie.contains("=") else {
                throw ComposeError(line: line, message: "\(argument.spelled) '\(HTTPSyntax.shown(cookie))' names a cookie file, which import does not read: write the cookies as \(argument.spelled) 'name=value; other=value'")
            }
            try setOptionHeader("Cookie", cookie, line: line)
            cookies.append(cookie)
        case .user:
            guard bytes.contains(UInt8(ascii: ":")) else {
                throw ComposeError(line: line, message: "\(argument.spelled) without ':password' would make curl ask for a password: write \(argument.spelled) 'user:password'")
            }
            try setOptionHeader("Authorization", CurlData.basicAuthorization(bytes), line: line)
        case .url:
            if let value = argument.value { urlOptions.append(value) }
        case .data(let kind):
            dataParts.append(try data.part(kind, bytes, spelled: argument.spelled, line: line))
            if dataLine == 0 { dataLine = line }
        case .compressed: compressed = true
        case .insecure: insecure = true
        case .get: get = true
        case .head: head = true
        case .http11: httpVersion = "HTTP/1.1"
        case .http2: httpVersion = "HTTP/2"
        case .ignored, .refused: break
        }
    }

    func finish(urls positional: [ShellWords.Word]) throws(ComposeError) -> ComposedRequest {
        let urls = positional + urlOptions
        guard let urlWord = urls.first else {
            throw ComposeError(message: "the curl command has no URL: add the request's https://… URL")
        }
        guard urls.count == 1 else {
            throw ComposeError(line: urls[1].line, message: "the curl command has more than one URL ('\(HTTPSyntax.shown(urlWord.text))', '\(HTTPSyntax.shown(urls[1].text))'): keep the one to send")
        }
        var urlText = try Self.text(urlWord.bytes, what: "the URL", line: urlWord.line)
        let body = Array(dataParts.joined(separator: [UInt8(ascii: "&")]))
        if get && !dataParts.isEmpty {
            urlText += (urlText.contains("?") ? "&" : "?") + String(decoding: body, as: UTF8.self)
        }
        let url: RequestURL
        switch RequestURL.parse(urlText) {
        case .success(let parsed): url = parsed
        case .failure(let problem): throw ComposeError(line: urlWord.line, message: problem.message)
        }
        if head && !get && !dataParts.isEmpty {
            throw ComposeError(line: dataLine, message: "-I (HEAD) cannot send a body: remove the data options or -I")
        }
        var headers: [HeaderField] = []
        for entry in entries {
            switch entry {
            case .given(let field):
                headers.append(field)
            case .option(let name):
                guard !removed.contains(name.lowercased()), !givenNames.contains(name.lowercased()) else { continue }
                let value = name == "Cookie" ? cookies.joined(separator: "; ") : optionValues[name] ?? ""
                if !value.isEmpty { headers.append(HeaderField(name: name, value: value)) }
            }
        }
        if let userInfo = url.userInfo, headers.first(named: "Authorization") == nil, !removed.contains("authorization") {
            guard let decoded = PercentDecoding.pathDecoded(userInfo) else {
                throw ComposeError(line: urlWord.line, message: "the user and password before the URL's host are not valid percent-encoded UTF-8: fix them or use -u")
            }
            headers.append(HeaderField(name: "Authorization", value: CurlData.basicAuthorization(Array(decoded.utf8))))
        }
        let sendsBody = !dataParts.isEmpty && !get
        if sendsBody, headers.first(named: "Content-Type") == nil, !removed.contains("content-type") {
            headers.append(HeaderField(name: "Content-Type", value: "application/x-www-form-urlencoded"))
        }
        if compressed, headers.first(named: "Accept-Encoding") == nil, !removed.contains("accept-encoding") {
            headers.append(HeaderField(name: "Accept-Encoding", value: "gzip, deflate, br, zstd"))
        }
        let chosenMethod = method ?? (head ? "HEAD" : get ? "GET" : sendsBody ? "POST" : "GET")
        return ComposedRequest(method: chosenMethod, url: url.text, headers: headers, body: sendsBody ? body : [],
                               httpVersion: httpVersion, insecure: insecure)
    }

    /// `-H 'Name: value'`, `-H 'Name;'` (empty value), `-H 'Name:'` (remove curl's own header).
    private mutating func addHeader(_ bytes: [UInt8], spelled: String, line: Int) throws(ComposeError) {
        let text = try Self.text(bytes, what: "the header given to \(spelled)", line: line)
        if text.hasPrefix("@") {
            throw ComposeError(line: line, message: "\(spelled) @file reads headers from a file, which import does not do: write each as \(spelled) 'Name: value'")
        }
        guard let colon = text.firstIndex(of: ":") else {
            let name = text.dropLast()
            if text.hasSuffix(";"), HTTPSyntax.isToken(name) {
                try append(HeaderField(name: String(name), value: ""), line: line)
                return
            }
            throw ComposeError(line: line, message: "the header '\(HTTPSyntax.shown(text))' has no colon: write it as 'Name: value' (or 'Name;' for an empty value)")
        }
        let name = String(text[..<colon])
        guard HTTPSyntax.isToken(name) else {
            throw ComposeError(line: line, message: "the header name '\(HTTPSyntax.shown(name))' is not an HTTP token (no spaces or separators): fix the name")
        }
        let value = HTTPSyntax.trimmed(text[text.index(after: colon)...])
        if value.isEmpty {
            removed.insert(name.lowercased())
            return
        }
        try append(HeaderField(name: name, value: value), line: line)
    }

    private mutating func append(_ field: HeaderField, line: Int) throws(ComposeError) {
        try Self.checkValue(field, line: line)
        guard !HTTPSyntax.isFraming(field.name) else { return }
        entries.append(.given(field))
        givenNames.insert(field.name.lowercased())
    }

    /// An option's header: a later value replaces an earlier one where that stood (`-b` values
    /// add up); an empty `-A` or `-e` value leaves the header out.
    private mutating func setOptionHeader(_ name: String, _ value: String, line: Int) throws(ComposeError) {
        try Self.checkValue(HeaderField(name: name, value: value), line: line)
        if optionValues.updateValue(value, forKey: name) == nil { entries.append(.option(name)) }
    }

    private static func checkValue(_ field: HeaderField, line: Int) throws(ComposeError) {
        guard HTTPSyntax.isFieldValue(field.value) else {
            throw ComposeError(line: line, message: "the \(HTTPSyntax.shown(field.name)) header value holds \(HTTPSyntax.controlName(in: field.value)); a header is one line: remove it")
        }
    }

    private static func text(_ bytes: [UInt8], what: String, line: Int) throws(ComposeError) -> String {
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ComposeError(line: line, message: "\(what) is not UTF-8 text: fix its bytes")
        }
        return text
    }
}
