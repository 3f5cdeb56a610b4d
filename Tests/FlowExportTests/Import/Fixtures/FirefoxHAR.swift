/// A HAR as Firefox's network panel exports it: `browser` in the log, `pages`, `_securityState`,
/// `startedDateTime` with a `+01:00` offset, `HTTP/2` without pseudo-headers, `cache` objects,
/// and a gzip response whose `content.text` is the decoded page.
enum FirefoxHAR {
    static let json = #"""
    {
      "log": {
        "version": "1.2",
        "creator": { "name": "Firefox", "version": "125.0.3" },
        "browser": { "name": "Firefox", "version": "125.0.3" },
        "pages": [
          {
            "startedDateTime": "2024-05-02T10:41:07.118+01:00",
            "id": "page_1",
            "title": "Mozilla",
            "pageTimings": { "onContentLoad": 301, "onLoad": 422 }
          }
        ],
        "entries": [
          {
            "pageref": "page_1",
            "startedDateTime": "2024-05-02T10:41:07.125+01:00",
            "request": {
              "bodySize": 0,
              "method": "GET",
              "url": "https://www.mozilla.org/en-US/",
              "httpVersion": "HTTP/2",
              "headers": [
                { "name": "Host", "value": "www.mozilla.org" },
                { "name": "User-Agent", "value": "Mozilla/5.0 (X11; Linux x86_64; rv:125.0) Gecko/20100101 Firefox/125.0" },
                { "name": "Accept", "value": "text/html,application/xhtml+xml,*/*;q=0.8" },
                { "name": "Accept-Encoding", "value": "gzip, deflate, br" }
              ],
              "cookies": [],
              "queryString": [],
              "headersSize": 412
            },
            "response": {
              "status": 200,
              "statusText": "OK",
              "httpVersion": "HTTP/2",
              "headers": [
                { "name": "content-type", "value": "text/html; charset=utf-8" },
                { "name": "content-encoding", "value": "gzip" },
                { "name": "x-frame-options", "value": "DENY" }
              ],
              "cookies": [],
              "content": {
                "mimeType": "text/html; charset=utf-8",
                "size": 61,
                "text": "<!DOCTYPE html>\n<html lang=\"en-US\"><title>Mozilla</title></html>"
              },
              "redirectURL": "",
              "headersSize": 318,
              "bodySize": 77
            },
            "cache": {},
            "timings": { "blocked": 0, "dns": 12, "connect": 30, "ssl": 18, "send": 0, "wait": 45, "receive": 2 },
            "time": 107,
            "_securityState": "secure",
            "serverIPAddress": "34.149.137.116",
            "connection": "443"
          },
          {
            "pageref": "page_1",
            "startedDateTime": "2024-05-02T10:41:07.300+01:00",
            "request": {
              "bodySize": 15,
              "method": "POST",
              "url": "https://www.mozilla.org/newsletter/",
              "httpVersion": "HTTP/2",
              "headers": [
                { "name": "Host", "value": "www.mozilla.org" },
                { "name": "Content-Type", "value": "application/x-www-form-urlencoded" }
              ],
              "cookies": [],
              "queryString": [],
              "headersSize": 230,
              "postData": {
                "mimeType": "application/x-www-form-urlencoded",
                "params": [
                  { "name": "email", "value": "a b@example.com" },
                  { "name": "lang", "value": "en" }
                ]
              }
            },
            "response": {
              "status": 302,
              "statusText": "Found",
              "httpVersion": "HTTP/2",
              "headers": [ { "name": "location", "value": "/newsletter/thanks/" } ],
              "cookies": [],
              "content": { "mimeType": "text/plain", "size": 0, "text": "" },
              "redirectURL": "/newsletter/thanks/",
              "headersSize": 120,
              "bodySize": 0
            },
            "cache": { "afterRequest": null },
            "timings": { "blocked": 0, "dns": 0, "connect": 0, "ssl": 0, "send": 0, "wait": 88, "receive": 0 },
            "time": 88,
            "_securityState": "secure",
            "serverIPAddress": "34.149.137.116",
            "connection": "443"
          }
        ]
      }
    }
    """#
}
