/// The page a browser or phone opens on the proxy to install ProxyApp's root CA: the two
/// downloads, the fingerprint to compare, and the few steps each platform needs.
///
/// Self-contained (inline CSS, no scripts, no external assets) so it renders on a device that
/// does not trust anything yet, and readable on a phone. Details and removal live in
/// `ca/README.md`; this page stays short.
enum CertificateInstallPage {
    /// The page for the CA named `caName` whose DER encoding has the SHA-256 fingerprint
    /// `certificateFingerprintSHA256` (shown as given, e.g. `AB:CD:…`). Both are HTML-escaped.
    /// `platform` (from the User-Agent) puts that device's downloads and steps first.
    static func html(certificateFingerprintSHA256: String, caName: String, platform: DevicePlatform = .unknown) -> String {
        let name = escapeHTML(caName)
        let fingerprint = escapeHTML(certificateFingerprintSHA256)
        let order: [DevicePlatform] = [.linux, .macOS, .iOS, .android, .windows]
        let first = order.contains(platform) ? [platform] + (platform == .macOS ? [.iOS] : []) : []
        let rest = order.filter { !first.contains($0) }
        let heading = first.isEmpty ? "" : "<h2 class=\"here\">On this \(platform.name)</h2>\n"
        let others = first.isEmpty ? "" : "<h2 class=\"here\">Other devices</h2>\n"
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>ProxyApp CA</title>
            <style>
            body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;max-width:42em;margin:0 auto;
              padding:1em;color:#222}
            h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.1em;margin:1.4em 0 .3em}h2.here{font-size:1.25em;
              border-bottom:1px solid #ccc}
            a.download{display:inline-block;padding:.6em 1.1em;margin:.3em .5em .3em 0;background:#0b63c5;color:#fff;
              border-radius:.4em;text-decoration:none;font-weight:600}
            code,pre{background:#f0f0f0;padding:.1em .3em;border-radius:.2em;overflow-wrap:anywhere}
            pre{padding:.5em;white-space:pre-wrap;font-size:.85em}
            .fingerprint{font-family:ui-monospace,monospace;font-size:.9em;overflow-wrap:anywhere;background:#f0f0f0;
              padding:.5em;border-radius:.3em}
            .note{color:#8a4b00}ol{padding-left:1.3em}
            </style></head>
            <body>
            <h1>ProxyApp CA</h1>
            <p>Install the root certificate <strong>\(name)</strong> so this device accepts the certificates
            ProxyApp makes to inspect HTTPS. <span class="note">Trust it only on devices you use for debugging,
            and remove it when you are done.</span></p>
            <p>\(downloads(first: first.first ?? .unknown))</p>
            <p>SHA-256 fingerprint: check that the certificate you install shows the same one.</p>
            <p class="fingerprint">\(fingerprint)</p>
            \(heading)\(first.map(section).joined())\(others)\(rest.map(section).joined())
            <p>Removal and more platforms: <code>ca/README.md</code> in the ProxyApp repository.</p>
            </body></html>

            """
    }

    /// The download buttons, the device's own first.
    private static func downloads(first platform: DevicePlatform) -> String {
        let buttons: [(DevicePlatform?, String)] = [
            (.iOS, "<a class=\"download\" href=\"/ProxyCA.mobileconfig\">ProxyCA.mobileconfig</a> profile: iPhone, iPad"),
            (.android, "<a class=\"download\" href=\"/ProxyCA.crt\">ProxyCA.crt</a> DER: Android"),
            (nil, "<a class=\"download\" href=\"/ProxyCA.cer\">ProxyCA.cer</a> DER: macOS, iOS, Android, Windows"),
            (.linux, "<a class=\"download\" href=\"/ProxyCA.pem\">ProxyCA.pem</a> PEM: Linux, Firefox, curl"),
        ]
        let ordered = buttons.filter { $0.0 == platform } + buttons.filter { $0.0 != platform }
        return ordered.map(\.1).joined(separator: "<br>\n")
    }

    private static func section(_ platform: DevicePlatform) -> String {
        switch platform {
        case .linux:
            return """
                <h2>Linux</h2>
                <p>System store (curl, Python, Go; Debian, Ubuntu): <code>sudo ca/install-debian.sh ProxyCA.pem</code>.<br>
                Chromium, Chrome and Firefox (NSS, needs <code>libnss3-tools</code>):
                <code>ca/install-nss.sh ProxyCA.pem</code>.<br>
                Both scripts are in the <code>ca/</code> folder of ProxyApp and take <code>--remove</code>.
                Fedora: <code>sudo trust anchor --store ProxyCA.pem</code>.</p>

                """
        case .macOS:
            return """
                <h2>macOS</h2>
                <p>Open <code>ProxyCA.cer</code>, add it to the login keychain, then in Keychain Access open it and set
                Trust → When using this certificate → <strong>Always Trust</strong>.</p>

                """
        case .iOS:
            return """
                <h2>iOS, iPadOS</h2>
                <ol><li>Open this page in <strong>Safari</strong>, tap <code>ProxyCA.mobileconfig</code> and allow the
                download.</li>
                <li>Settings → <strong>Profile Downloaded</strong> (or General → VPN &amp; Device Management) → the
                ProxyApp CA profile → Install.</li>
                <li>Settings → General → About → Certificate Trust Settings → turn on <strong>full trust</strong> for
                it. Without this step HTTPS still fails.</li></ol>

                """
        case .android:
            return """
                <h2>Android</h2>
                <ol><li>Download <code>ProxyCA.crt</code>.</li>
                <li>Settings → Security → Encryption &amp; credentials → Install a certificate → CA certificate
                (the path varies by maker: search Settings for “CA certificate”).</li></ol>
                <p>Chrome trusts it. Apps for Android 7 (API 24) and later trust only the system's CAs unless their
                network security config lets in user CAs; for an app you build, add
                <code>res/xml/network_security_config.xml</code>, named by
                <code>android:networkSecurityConfig="@xml/network_security_config"</code> in the manifest:</p>
                <pre>&lt;network-security-config&gt;
                  &lt;debug-overrides&gt;
                    &lt;trust-anchors&gt;
                      &lt;certificates src="user" /&gt;
                    &lt;/trust-anchors&gt;
                  &lt;/debug-overrides&gt;
                &lt;/network-security-config&gt;</pre>
                <p>(<code>debug-overrides</code>: only debuggable builds trust user CAs; the same
                <code>trust-anchors</code> in <code>base-config</code>, with <code>src="system"</code> too, would
                make every build trust them.)</p>
                <p class="note">Apps without it cannot be intercepted on a device without root.</p>

                """
        case .windows:
            return """
                <h2>Windows</h2>
                <p>Open <code>ProxyCA.cer</code> → Install Certificate → Place all certificates in the following
                store → Trusted Root Certification Authorities; or
                <code>certutil -user -addstore Root ProxyCA.cer</code>.</p>

                """
        case .unknown:
            return ""
        }
    }

    /// Escapes text for HTML element content and attribute values.
    static func escapeHTML(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text.unicodeScalars {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }
}
