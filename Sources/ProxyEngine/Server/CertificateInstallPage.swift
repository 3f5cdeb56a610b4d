/// The page a browser or phone opens on the proxy to install ProxyApp's root CA: the two
/// downloads, the fingerprint to compare, and the few steps each platform needs.
///
/// Self-contained (inline CSS, no scripts, no external assets) so it renders on a device that
/// does not trust anything yet, and readable on a phone. Details and removal live in
/// `ca/README.md`; this page stays short.
enum CertificateInstallPage {
    /// The page for the CA named `caName` whose DER encoding has the SHA-256 fingerprint
    /// `certificateFingerprintSHA256` (shown as given, e.g. `AB:CD:…`). Both are HTML-escaped.
    static func html(certificateFingerprintSHA256: String, caName: String) -> String {
        let name = escapeHTML(caName)
        let fingerprint = escapeHTML(certificateFingerprintSHA256)
        return """
            <!doctype html>
            <html lang="en"><head><meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <title>ProxyApp CA</title>
            <style>
            body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif;max-width:42em;margin:0 auto;
              padding:1em;color:#222}
            h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.1em;margin:1.4em 0 .3em}
            a.download{display:inline-block;padding:.6em 1.1em;margin:.3em .5em .3em 0;background:#0b63c5;color:#fff;
              border-radius:.4em;text-decoration:none;font-weight:600}
            code{background:#f0f0f0;padding:.1em .3em;border-radius:.2em;overflow-wrap:anywhere}
            .fingerprint{font-family:ui-monospace,monospace;font-size:.9em;overflow-wrap:anywhere;background:#f0f0f0;
              padding:.5em;border-radius:.3em}
            .note{color:#8a4b00}ol{padding-left:1.3em}
            </style></head>
            <body>
            <h1>ProxyApp CA</h1>
            <p>Install the root certificate <strong>\(name)</strong> so this device accepts the certificates
            ProxyApp makes to inspect HTTPS. <span class="note">Trust it only on devices you use for debugging,
            and remove it when you are done.</span></p>
            <p><a class="download" href="/ProxyCA.cer">ProxyCA.cer</a> DER: macOS, iOS, Android, Windows<br>
            <a class="download" href="/ProxyCA.pem">ProxyCA.pem</a> PEM: Linux, Firefox, curl</p>
            <p>SHA-256 fingerprint: check that the certificate you install shows the same one.</p>
            <p class="fingerprint">\(fingerprint)</p>

            <h2>Linux</h2>
            <p>System store (curl, Python, Go; Debian, Ubuntu): <code>sudo ca/install-debian.sh ProxyCA.pem</code>.<br>
            Chromium, Chrome and Firefox (NSS, needs <code>libnss3-tools</code>):
            <code>ca/install-nss.sh ProxyCA.pem</code>.<br>
            Both scripts are in the <code>ca/</code> folder of ProxyApp and take <code>--remove</code>.
            Fedora: <code>sudo trust anchor --store ProxyCA.pem</code>.</p>

            <h2>macOS</h2>
            <p>Open <code>ProxyCA.cer</code>, add it to the login keychain, then in Keychain Access open it and set
            Trust → When using this certificate → <strong>Always Trust</strong>.</p>

            <h2>iOS, iPadOS</h2>
            <ol><li>Open this page in <strong>Safari</strong>, tap <code>ProxyCA.cer</code> and allow the download.</li>
            <li>Settings → General → VPN &amp; Device Management → the ProxyApp profile → Install.</li>
            <li>Settings → General → About → Certificate Trust Settings → turn on full trust for it.</li></ol>

            <h2>Android</h2>
            <p>Download <code>ProxyCA.cer</code>, then Settings → Security → Encryption &amp; credentials →
            Install a certificate → CA certificate. Chrome trusts it; most apps (API 24 and later) trust only
            system CAs unless their network security config allows user CAs.</p>

            <h2>Windows</h2>
            <p>Open <code>ProxyCA.cer</code> → Install Certificate → Place all certificates in the following
            store → Trusted Root Certification Authorities; or
            <code>certutil -user -addstore Root ProxyCA.cer</code>.</p>

            <p>Removal and more platforms: <code>ca/README.md</code> in the ProxyApp repository.</p>
            </body></html>

            """
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
