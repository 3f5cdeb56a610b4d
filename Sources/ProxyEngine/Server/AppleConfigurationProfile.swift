import Foundation

/// The root CA as an Apple configuration profile (`ProxyCA.mobileconfig`): one
/// `com.apple.security.root` payload holding the DER certificate, which iOS and iPadOS install
/// from Settings after a download in Safari (a bare `.cer` works too, but the profile names
/// itself and installs in one place).
///
/// Unsigned (iOS then says "Not Verified", as for every self-made profile). The identifiers and
/// UUIDs come from the CA's fingerprint, so installing the profile of the same CA again replaces
/// it instead of adding a second one, and a regenerated CA gets a profile of its own.
enum AppleConfigurationProfile {
    static let contentType = "application/x-apple-aspen-config"

    static func xml(certificateDER: [UInt8], sha256Fingerprint: String, caName: String) -> String {
        let hex = sha256Fingerprint.filter(\.isHexDigit).uppercased()
        let profileUUID = uuid(from: hex.prefix(32))
        let payloadUUID = uuid(from: hex.dropFirst(32).prefix(32))
        let name = CertificateInstallPage.escapeHTML(caName)  // XML escaping: the same five characters
        let tag = hex.prefix(16)
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
            <plist version="1.0">
            <dict>
              <key>PayloadContent</key>
              <array>
                <dict>
                  <key>PayloadCertificateFileName</key><string>ProxyCA.cer</string>
                  <key>PayloadContent</key>
                  <data>\(Data(certificateDER).base64EncodedString(options: [.lineLength76Characters, .endLineWithLineFeed]))</data>
                  <key>PayloadDescription</key><string>Adds the ProxyApp root certificate</string>
                  <key>PayloadDisplayName</key><string>\(name)</string>
                  <key>PayloadIdentifier</key><string>app.proxyapp.ca.\(tag).certificate</string>
                  <key>PayloadType</key><string>com.apple.security.root</string>
                  <key>PayloadUUID</key><string>\(payloadUUID)</string>
                  <key>PayloadVersion</key><integer>1</integer>
                </dict>
              </array>
              <key>PayloadDescription</key><string>Lets this device accept the certificates ProxyApp makes to inspect HTTPS. Remove it when you are done debugging.</string>
              <key>PayloadDisplayName</key><string>ProxyApp CA (\(name))</string>
              <key>PayloadIdentifier</key><string>app.proxyapp.ca.\(tag)</string>
              <key>PayloadRemovalDisallowed</key><false/>
              <key>PayloadType</key><string>Configuration</string>
              <key>PayloadUUID</key><string>\(profileUUID)</string>
              <key>PayloadVersion</key><integer>1</integer>
            </dict>
            </plist>

            """
    }

    /// 32 hex digits as a UUID (8-4-4-4-12); fewer are padded with zeros.
    static func uuid(from hex: Substring) -> String {
        let digits = Array(hex.padding(toLength: 32, withPad: "0", startingAt: 0))
        let groups = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(digits[$0]) }
        return groups.joined(separator: "-")
    }
}
