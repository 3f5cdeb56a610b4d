/// The kind of device a browser runs on, told from its `User-Agent`, so the CA page can put
/// that device's download and steps first. A guess for ordering only: every platform's steps
/// stay on the page.
enum DevicePlatform: Equatable, Sendable {
    case iOS
    case android
    case macOS
    case windows
    case linux
    case unknown

    /// iPadOS Safari sends a Mac's User-Agent, so `macOS` may be an iPad: the page then shows
    /// the profile download next to the Mac steps.
    init(userAgent: String?) {
        guard let agent = userAgent?.prefix(1024) else {
            self = .unknown
            return
        }
        func has(_ word: String) -> Bool { agent.range(of: word, options: .caseInsensitive) != nil }
        if has("iPhone") || has("iPad") || has("iPod") {
            self = .iOS
        } else if has("Android") {
            self = .android
        } else if has("Macintosh") || has("Mac OS X") {
            self = .macOS
        } else if has("Windows") {
            self = .windows
        } else if has("Linux") || has("X11") || has("CrOS") {
            self = .linux
        } else {
            self = .unknown
        }
    }

    /// How the page names it.
    var name: String {
        switch self {
        case .iOS: "iPhone or iPad"
        case .android: "Android"
        case .macOS: "Mac"
        case .windows: "Windows"
        case .linux: "Linux"
        case .unknown: "this device"
        }
    }
}
