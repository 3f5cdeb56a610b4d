/// A HAR as Chrome DevTools exports it ("Save all as HAR with content"): `_initiator`,
/// `_priority`, `_resourceType`, `_transferSize` extras, HTTP/2 pseudo-headers in lower-case
/// header lists, `connection` as a port string, `_error: null`, an IPv6 `serverIPAddress` in
/// brackets, base64 image content and a failed request with status 0.
enum ChromeHAR {
    static let json = #"""
    {
      "log": {
        "version": "1.2",
        "creator": { "name": "WebInspector", "version": "537.36" },
        "pages": [
          {
            "startedDateTime": "2024-05-02T09:41:07.118Z",
            "id": "page_1",
            "title": "https://example.com/",
            "pageTimings": { "onContentLoad": 412.507, "onLoad": 690.129 }
          }
        ],
        "entries": [
          {
            "_connectionId": "123456",
            "_initiator": { "type": "other" },
            "_priority": "VeryHigh",
            "_resourceType": "document",
            "cache": {},
            "connection": "443",
            "pageref": "page_1",
            "request": {
              "method": "GET",
              "url": "https://example.com/?lang=en",
              "httpVersion": "http/2.0",
              "headers": [
                { "name": ":authority", "value": "example.com" },
                { "name": ":method", "value": "GET" },
                { "name": ":path", "value": "/?lang=en" },
                { "name": ":scheme", "value": "https" },
                { "name": "accept", "value": "text/html,application/xhtml+xml" },
                { "name": "accept-encoding", "value": "gzip, deflate, br, zstd" },
                { "name": "user-agent", "value": "Mozilla/5.0 (X11; Linux x86_64) Chrome/124.0.0.0 Safari/537.36" }
              ],
              "queryString": [ { "name": "lang", "value": "en" } ],
              "cookies": [],
              "headersSize": -1,
              "bodySize": 0
            },
            "response": {
              "status": 200,
              "statusText": "",
              "httpVersion": "http/2.0",
              "headers": [
                { "name": "content-encoding", "value": "br" },
                { "name": "content-type", "value": "text/html; charset=UTF-8" },
                { "name": "date", "value": "Thu, 02 May 2024 09:41:07 GMT" }
              ],
              "cookies": [],
              "content": {
                "size": 44,
                "mimeType": "text/html",
                "compression": -2,
                "text": "<!doctype html><title>Example</title><p>Hi"
              },
              "redirectURL": "",
              "headersSize": -1,
              "bodySize": 46,
              "_transferSize": 1002,
              "_error": null,
              "_fetchedViaServiceWorker": false
            },
            "serverIPAddress": "93.184.215.14",
            "startedDateTime": "2024-05-02T09:41:07.121Z",
            "time": 215.43,
            "timings": {
              "blocked": 3.1, "dns": 20.5, "ssl": 40.2, "connect": 75.8, "send": 0.3, "wait": 98.6,
              "receive": 17.3, "_blocked_queueing": 1.9, "_workerStart": -1, "_workerReady": -1
            }
          },
          {
            "_initiator": {
              "type": "parser", "url": "https://example.com/", "lineNumber": 12
            },
            "_priority": "Low",
            "_resourceType": "image",
            "cache": {},
            "connection": "8812",
            "pageref": "page_1",
            "request": {
              "method": "GET",
              "url": "https://cdn.example.com/pixel.png",
              "httpVersion": "h3",
              "headers": [
                { "name": ":authority", "value": "cdn.example.com" },
                { "name": ":method", "value": "GET" },
                { "name": ":path", "value": "/pixel.png" },
                { "name": ":scheme", "value": "https" },
                { "name": "accept", "value": "image/avif,image/webp,*/*" },
                { "name": "referer", "value": "https://example.com/" }
              ],
              "queryString": [],
              "cookies": [],
              "headersSize": -1,
              "bodySize": 0
            },
            "response": {
              "status": 200,
              "statusText": "",
              "httpVersion": "h3",
              "headers": [
                { "name": "content-type", "value": "image/png" },
                { "name": "content-length", "value": "8" }
              ],
              "cookies": [],
              "content": { "size": 8, "mimeType": "image/png", "text": "iVBORw0KGgo=", "encoding": "base64" },
              "redirectURL": "",
              "headersSize": -1,
              "bodySize": 8,
              "_transferSize": 120,
              "_error": null
            },
            "serverIPAddress": "[2606:2800:21f:cb07:6820:80da:af6b:8b2c]",
            "startedDateTime": "2024-05-02T09:41:07.402Z",
            "time": 31.08,
            "timings": { "blocked": 0.9, "dns": -1, "ssl": -1, "connect": -1, "send": 0.2, "wait": 28.4, "receive": 1.58 }
          },
          {
            "_initiator": {
              "type": "script",
              "stack": { "callFrames": [ { "functionName": "send", "url": "https://example.com/app.js", "lineNumber": 3, "columnNumber": 10 } ] }
            },
            "_priority": "High",
            "_resourceType": "fetch",
            "cache": {},
            "connection": "443",
            "pageref": "page_1",
            "request": {
              "method": "POST",
              "url": "https://example.com/api/items",
              "httpVersion": "http/2.0",
              "headers": [
                { "name": ":authority", "value": "example.com" },
                { "name": ":method", "value": "POST" },
                { "name": ":path", "value": "/api/items" },
                { "name": ":scheme", "value": "https" },
                { "name": "content-type", "value": "application/json" }
              ],
              "queryString": [],
              "cookies": [],
              "headersSize": -1,
              "bodySize": 27,
              "postData": { "mimeType": "application/json", "text": "{\"name\":\"pen\",\"count\":2}" }
            },
            "response": {
              "status": 201,
              "statusText": "",
              "httpVersion": "http/2.0",
              "headers": [ { "name": "content-type", "value": "application/json" } ],
              "cookies": [],
              "content": { "size": 9, "mimeType": "application/json", "text": "{\"id\":7}" },
              "redirectURL": "",
              "headersSize": -1,
              "bodySize": 9,
              "_transferSize": 80,
              "_error": null
            },
            "serverIPAddress": "93.184.215.14",
            "startedDateTime": "2024-05-02T09:41:08.010Z",
            "time": 60.2,
            "timings": { "blocked": 0.5, "dns": -1, "ssl": -1, "connect": -1, "send": 0.1, "wait": 58.1, "receive": 1.5 }
          },
          {
            "_initiator": { "type": "script" },
            "_priority": "High",
            "_resourceType": "xhr",
            "cache": {},
            "pageref": "page_1",
            "request": {
              "method": "GET",
              "url": "https://tracker.invalid/beacon",
              "httpVersion": "",
              "headers": [],
              "queryString": [],
              "cookies": [],
              "headersSize": -1,
              "bodySize": 0
            },
            "response": {
              "status": 0,
              "statusText": "",
              "httpVersion": "",
              "headers": [],
              "cookies": [],
              "content": { "size": 0, "mimeType": "x-unknown" },
              "redirectURL": "",
              "headersSize": -1,
              "bodySize": -1,
              "_transferSize": 0,
              "_error": "net::ERR_NAME_NOT_RESOLVED"
            },
            "serverIPAddress": "",
            "startedDateTime": "2024-05-02T09:41:08.200Z",
            "time": 12.7,
            "timings": { "blocked": 12.7, "dns": -1, "ssl": -1, "connect": -1, "send": 0, "wait": 0, "receive": 0 }
          }
        ]
      }
    }
    """#
}
