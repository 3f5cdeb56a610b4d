/// A HAR as Charles Proxy exports it: `_charlesStatus` on responses, `+01:00` timestamps with
/// milliseconds, `time` and full `timings`, `comment` fields, and a failed request (status 0,
/// the reason in the response's `comment`).
enum CharlesHAR {
    static let json = #"""
    {
      "log": {
        "version": "1.2",
        "creator": { "name": "Charles Proxy", "version": "4.6.6" },
        "entries": [
          {
            "startedDateTime": "2024-05-02T10:41:07.500+01:00",
            "time": 143,
            "request": {
              "method": "GET",
              "url": "http://localhost:3000/health",
              "httpVersion": "HTTP/1.1",
              "cookies": [],
              "headers": [
                { "name": "Host", "value": "localhost:3000" },
                { "name": "Accept", "value": "application/json" }
              ],
              "queryString": [],
              "headersSize": 64,
              "bodySize": 0
            },
            "response": {
              "_charlesStatus": "COMPLETE",
              "status": 200,
              "statusText": "OK",
              "httpVersion": "HTTP/1.1",
              "cookies": [],
              "headers": [ { "name": "Content-Type", "value": "application/json" } ],
              "content": { "size": 15, "mimeType": "application/json", "text": "{\"status\":\"ok\"}" },
              "redirectURL": null,
              "headersSize": 90,
              "bodySize": 15
            },
            "serverIPAddress": "127.0.0.1",
            "cache": {},
            "timings": { "blocked": -1, "dns": 1, "connect": 2, "ssl": -1, "send": 0, "wait": 130, "receive": 10 },
            "comment": ""
          },
          {
            "startedDateTime": "2024-05-02T10:41:09.000+01:00",
            "time": 3,
            "request": {
              "method": "GET",
              "url": "http://localhost:3001/",
              "httpVersion": "HTTP/1.1",
              "cookies": [],
              "headers": [ { "name": "Host", "value": "localhost:3001" } ],
              "queryString": [],
              "headersSize": 40,
              "bodySize": 0
            },
            "response": {
              "_charlesStatus": "FAILED",
              "status": 0,
              "statusText": null,
              "httpVersion": null,
              "cookies": [],
              "headers": [],
              "content": { "size": 0 },
              "redirectURL": null,
              "headersSize": -1,
              "bodySize": -1,
              "comment": "Connection refused"
            },
            "serverIPAddress": "127.0.0.1",
            "cache": {},
            "timings": { "blocked": -1, "dns": 0, "connect": -1, "ssl": -1, "send": -1, "wait": -1, "receive": -1 }
          }
        ]
      }
    }
    """#
}
