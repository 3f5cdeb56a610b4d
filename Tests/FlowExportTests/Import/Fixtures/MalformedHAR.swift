/// Broken HAR files, one fault each, for the error messages.
enum MalformedHAR {
    static let notJSON = #"""
    <html><body>Not a HAR</body></html>
    """#

    static let truncatedJSON = #"""
    { "log": { "entries": [ { "startedDateTime": "2024-05-02T09:41:07Z",
    """#

    static let missingComma = #"""
    { "log": {
        "version": "1.2"
        "entries": []
    } }
    """#

    static let missingLog = #"""
    { "version": "1.2", "creator": { "name": "x", "version": "1" } }
    """#

    static let entriesNotAnArray = #"""
    { "log": { "version": "1.2", "entries": { "0": {} } } }
    """#

    /// Entries 0 and 1 are fine; entry 2's request has no `url`.
    static let thirdEntryWithoutURL = #"""
    { "log": { "entries": [
      { "startedDateTime": "2024-05-02T09:41:07Z", "request": { "method": "GET", "url": "http://a.test/" } },
      { "startedDateTime": "2024-05-02T09:41:08Z", "request": { "method": "GET", "url": "http://b.test/" } },
      { "startedDateTime": "2024-05-02T09:41:09Z", "request": { "method": "GET", "headers": [] } }
    ] } }
    """#

    static let badDate = #"""
    { "log": { "entries": [
      { "startedDateTime": "Thu, 02 May 2024 09:41:07 GMT", "request": { "method": "GET", "url": "http://a.test/" } }
    ] } }
    """#

    static let badBase64 = #"""
    { "log": { "entries": [
      { "startedDateTime": "2024-05-02T09:41:07Z", "request": { "method": "GET", "url": "http://a.test/" } },
      { "startedDateTime": "2024-05-02T09:41:08Z", "request": { "method": "GET", "url": "http://a.test/logo.png" },
        "response": { "status": 200, "content": { "mimeType": "image/png", "text": "iVBOR*w0K", "encoding": "base64" } } }
    ] } }
    """#

    static let statusAsString = #"""
    { "log": { "entries": [
      { "startedDateTime": "2024-05-02T09:41:07Z", "request": { "method": "GET", "url": "http://a.test/" },
        "response": { "status": "200" } }
    ] } }
    """#

    static let headerWithoutName = #"""
    { "log": { "entries": [
      { "startedDateTime": "2024-05-02T09:41:07Z",
        "request": { "method": "GET", "url": "http://a.test/", "headers": [ { "name": "Accept", "value": "*/*" }, { "value": "x" } ] } }
    ] } }
    """#

    static let relativeURL = #"""
    { "log": { "entries": [
      { "startedDateTime": "2024-05-02T09:41:07Z", "request": { "method": "GET", "url": "/api/items" } }
    ] } }
    """#

    static let dataURL = #"""
    { "log": { "entries": [
      { "startedDateTime": "2024-05-02T09:41:07Z", "request": { "method": "GET", "url": "ftp://files.test/a.txt" } }
    ] } }
    """#

    static let badPort = #"""
    { "log": { "entries": [
      { "startedDateTime": "2024-05-02T09:41:07Z", "request": { "method": "GET", "url": "http://a.test:99999/" } }
    ] } }
    """#

    static let unknownBodyEncoding = #"""
    { "log": { "entries": [
      { "startedDateTime": "2024-05-02T09:41:07Z", "request": { "method": "GET", "url": "http://a.test/" },
        "response": { "status": 200, "content": { "text": "abc", "encoding": "quoted-printable" } } }
    ] } }
    """#
}
