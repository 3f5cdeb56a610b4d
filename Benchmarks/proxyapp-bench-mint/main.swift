// proxyapp-bench-mint [LEAVES]: what minting leaf certificates costs, one `report`-style line per
// figure (scripts/bench prints them beside its proxy figures). Build it in release:
// `swift build -c release --product proxyapp-bench-mint`. LEAVES (default 2000) distinct names
// are minted per figure; the RSA figure uses a tenth of them (RSA signatures are slow).
import Dispatch
import Foundation
import Crypto
import ProxyTLS
import X509
import _CryptoExtras

let arguments = CommandLine.arguments.dropFirst()
guard arguments.count <= 1, let leafCount = Int(arguments.first ?? "2000"), leafCount > 0 else {
    FileHandle.standardError.write(Data("usage: proxyapp-bench-mint [LEAVES]   (a positive count, default 2000)\n".utf8))
    exit(2)
}

/// Same layout as scripts/lib/bench-lib.sh's `report`: WHO, WHAT, VALUE, UNIT.
func report(_ what: String, _ value: Double) {
    let padded = what.padding(toLength: max(36, what.count), withPad: " ", startingAt: 0)
    let number = String(format: "%.2f", value)
    print("mint".padding(toLength: 8, withPad: " ", startingAt: 0) + " " + padded + " "
        + String(repeating: " ", count: max(0, 14 - number.count)) + number + " µs")
}

/// Microseconds per call of `body` over `count` calls, after one warm-up call.
func microsecondsPerCall(_ count: Int, _ body: (Int) throws -> Void) rethrows -> Double {
    try body(-1)
    let start = DispatchTime.now().uptimeNanoseconds
    for index in 0..<count { try body(index) }
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1_000 / Double(count)
}

func hosts(_ prefix: String, _ count: Int) -> [String] {
    (0..<count).map { "host-\($0).\(prefix).example" }
}

do {
    let referenceKey = P256.Signing.PrivateKey()
    let referenceMessage = [UInt8](repeating: 7, count: 300)
    report("P-256 signature alone (reference)", try microsecondsPerCall(leafCount) { _ in
        _ = try referenceKey.signature(for: referenceMessage)
    })

    let minter = try LeafCertificateMinter(authority: try CertificateAuthority.generate(commonName: "Bench CA"))
    let now = Date()

    let signNames = hosts("sign", leafCount)
    report("leaf sign only (shared key)", try microsecondsPerCall(leafCount) { index in
        _ = try minter.makeCertificate(host: index < 0 ? "warm.example" : signNames[index], now: now)
    })

    let mintNames = hosts("mint", leafCount)
    report("leaf mint (shared key)", try microsecondsPerCall(leafCount) { index in
        _ = try minter.mint(host: index < 0 ? "warm.example" : mintNames[index], now: now)
    })

    let cache = LeafCertificateCache(minter: minter, capacity: leafCount)
    let filled = DispatchGroup()
    for name in mintNames {
        filled.enter()
        cache.leaf(for: name) { result in
            if case .failure(let error) = result { fatalError("mint for the cache failed: \(error)") }
            filled.leave()
        }
    }
    filled.wait()
    report("cache hit", microsecondsPerCall(leafCount) { index in
        cache.leaf(for: mintNames[max(index, 0)]) { _ in }
    })

    let rsaKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
    let rsaName = try DistinguishedName { CommonName("Bench RSA CA") }
    let rsaExtensions = try Certificate.Extensions {
        Critical(BasicConstraints.isCertificateAuthority(maxPathLength: 0))
        Critical(KeyUsage(keyCertSign: true, cRLSign: true))
    }
    let rsaRoot = try Certificate(
        version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: Certificate.PrivateKey(rsaKey).publicKey,
        notValidBefore: now - 86_400, notValidAfter: now + 365 * 86_400, issuer: rsaName, subject: rsaName,
        extensions: rsaExtensions, issuerPrivateKey: Certificate.PrivateKey(rsaKey))
    let rsaMinter = try LeafCertificateMinter(
        authority: try CertificateAuthority(certificate: rsaRoot, privateKey: Certificate.PrivateKey(rsaKey)))
    let rsaCount = max(1, leafCount / 10)
    let rsaNames = hosts("rsa", rsaCount)
    report("leaf mint (RSA-2048 CA)", try microsecondsPerCall(rsaCount) { index in
        _ = try rsaMinter.mint(host: index < 0 ? "warm.example" : rsaNames[index], now: now)
    })
} catch {
    FileHandle.standardError.write(Data("proxyapp-bench-mint: \(error)\n".utf8))
    exit(1)
}
