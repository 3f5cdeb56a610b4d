/// A HAR as mitmproxy's `savehar` addon writes it: Python `isoformat()` timestamps (microseconds,
/// `+00:00`), `serverIPAddress`, timings with `ssl: -1` on plain HTTP, a gzip `Content-Encoding`
/// header over decoded `content.text`, and `content.encoding: base64` for a binary body.
enum MitmproxyHAR {
    static let json = #"""
    {
      "log": {
        "version": "1.2",
        "creator": { "name": "mitmproxy", "version": "10.3.0", "comment": "" },
        "pages": [],
        "entries": [
          {
            "startedDateTime": "2024-05-02T09:41:07.123456+00:00",
            "time": 52.75,
            "request": {
              "method": "GET",
              "url": "http://httpbin.org/gzip",
              "httpVersion": "HTTP/1.1",
              "cookies": [],
              "headers": [
                { "name": "Host", "value": "httpbin.org" },
                { "name": "User-Agent", "value": "curl/8.5.0" },
                { "name": "Accept", "value": "*/*" },
                { "name": "Accept-Encoding", "value": "gzip" }
              ],
              "queryString": [],
              "headersSize": 104,
              "bodySize": 0
            },
            "response": {
              "status": 200,
              "statusText": "OK",
              "httpVersion": "HTTP/1.1",
              "cookies": [],
              "headers": [
                { "name": "Content-Type", "value": "application/json" },
                { "name": "Content-Encoding", "value": "gzip" },
                { "name": "Content-Length", "value": "79" }
              ],
              "content": {
                "size": 37,
                "compression": -42,
                "mimeType": "application/json",
                "text": "{\n  \"gzipped\": true,\n  \"method\": \"GET\"\n}"
              },
              "redirectURL": "",
              "headersSize": 156,
              "bodySize": 79
            },
            "cache": {},
            "timings": { "connect": 20.5, "ssl": -1, "send": 0.5, "receive": 1.75, "wait": 30.0 },
            "serverIPAddress": "54.204.39.132"
          },
          {
            "startedDateTime": "2024-05-02T09:41:08.500000+00:00",
            "time": 40.0,
            "request": {
              "method": "PUT",
              "url": "https://httpbin.org:8443/put",
              "httpVersion": "HTTP/1.1",
              "cookies": [],
              "headers": [
                { "name": "Host", "value": "httpbin.org:8443" },
                { "name": "Content-Type", "value": "application/octet-stream" },
                { "name": "Content-Length", "value": "4" }
              ],
              "queryString": [],
              "headersSize": 98,
              "bodySize": 4,
              "postData": { "mimeType": "application/octet-stream", "text": "AAECAw==", "encoding": "base64" }
            },
            "response": {
              "status": 200,
              "statusText": "OK",
              "httpVersion": "HTTP/1.1",
              "cookies": [],
              "headers": [ { "name": "Content-Type", "value": "application/octet-stream" } ],
              "content": { "size": 5, "compression": 0, "mimeType": "application/octet-stream", "text": "/wD+Af0=", "encoding": "base64" },
              "redirectURL": "",
              "headersSize": 70,
              "bodySize": 5
            },
            "cache": {},
            "timings": { "connect": 35.0, "ssl": 25.0, "send": 1.0, "receive": 1.0, "wait": 3.0 },
            "serverIPAddress": "54.204.39.132"
          }
        ]
      }
    }
    """#
}
