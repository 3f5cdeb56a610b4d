/// The `Content-Type` a map-local answer gets from its file's extension when the rule names
/// none: the common web types, else `application/octet-stream`.
public enum ContentTypeGuess {
    public static func contentType(forPath path: String) -> String {
        let name = path.split(separator: "/").last ?? ""
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return "application/octet-stream" }
        return types[name[name.index(after: dot)...].lowercased()] ?? "application/octet-stream"
    }

    private static let types: [String: String] = [
        "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8",
        "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "mjs": "text/javascript; charset=utf-8", "json": "application/json",
        "map": "application/json", "xml": "application/xml", "txt": "text/plain; charset=utf-8",
        "csv": "text/csv; charset=utf-8", "md": "text/markdown; charset=utf-8",
        "yaml": "application/yaml", "yml": "application/yaml", "svg": "image/svg+xml",
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
        "webp": "image/webp", "avif": "image/avif", "ico": "image/x-icon", "bmp": "image/bmp",
        "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
        "mp4": "video/mp4", "webm": "video/webm", "mp3": "audio/mpeg", "wav": "audio/wav",
        "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip",
        "wasm": "application/wasm", "m3u8": "application/vnd.apple.mpegurl", "ts": "video/mp2t",
        "pb": "application/x-protobuf", "bin": "application/octet-stream",
    ]
}
