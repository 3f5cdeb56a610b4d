// Placeholder until the https-c branch lands with the real page.
enum CertificateInstallPage {
    static func html(certificateFingerprintSHA256: String, caName: String) -> String {
        "<!doctype html><title>ProxyApp CA</title><a href=\"/ProxyCA.cer\">ProxyCA.cer</a> <a href=\"/ProxyCA.pem\">ProxyCA.pem</a> \(certificateFingerprintSHA256)"
    }
}
