import Foundation

/// A TLS client that does what real clients never do on their own, written with python3's `ssl`
/// module (its ClientHello is a real OpenSSL one, taken from a memory BIO) and driven over a
/// plain socket: the one-packet pin attack, an alert sent before or after our certificate, a
/// ClientHello sent late or with the record version 0x0300. Optionally through a CONNECT first.
///
/// Each run prints one line, parsed into `Outcome`; a client failure is an exit code and the
/// text on standard error.
public enum ScriptedTLSClient {
    public enum Mode: String, Sendable {
        /// ClientHello and a junk record in one packet (the pin attack of issue 13).
        case helloAndJunk = "hello-and-junk"
        /// ClientHello and a fatal unencrypted `unknown_ca` alert in one packet.
        case helloAndAlert = "hello-and-alert"
        /// ClientHello, wait for the server's flight, then a fatal unencrypted `unknown_ca` alert:
        /// what an OpenSSL client that rejects the certificate sends on TLS 1.3.
        case alertAfterFlight = "alert-after-flight"
        /// ClientHello, wait for the server's flight, then close without a word (as Node does).
        case closeAfterFlight = "close-after-flight"
        /// ClientHello with its record version set to 0x0300; prints the first bytes answered.
        case recordVersion0300 = "record-version-0300"
        /// Waits `delay` seconds before a full handshake trusting `caFile`, then `GET /echo`.
        case slowHandshake = "slow-handshake"
        /// A full handshake trusting `caFile` with the ClientHello of the modes above (same
        /// settings, so the same fingerprint), then `GET /echo`: a client that trusts the proxy.
        case handshake = "handshake"
    }

    public struct Outcome: Sendable {
        public var exitCode: Int32
        /// The script's one line: the first bytes received (hex), or the response's status line.
        public var line: String
        public var errors: String
    }

    /// Runs `mode` against `127.0.0.1:port`, first sending `CONNECT connectTarget` when given,
    /// from `sourceAddress` (any 127.x.y.z on Linux) when given.
    public static func run(_ mode: Mode, port: Int, serverName: String, connectTarget: String? = nil,
                           caFile: String? = nil, delay: Double = 0, sourceAddress: String = "",
                           timeout: TimeInterval = 20) async throws -> Outcome {
        let outcome = try await ChildProcess.run(
            "/usr/bin/python3",
            ["-c", script, mode.rawValue, String(port), serverName, connectTarget ?? "", caFile ?? "", String(delay),
             sourceAddress],
            timeout: timeout)
        return Outcome(exitCode: outcome.exitCode,
                       line: String(decoding: outcome.stdout, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines),
                       errors: String(decoding: outcome.stderr, as: UTF8.self))
    }

    private static let script = #"""
import socket, ssl, sys, time
mode, port, sni, target, cafile, delay = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], float(sys.argv[6])
source = sys.argv[7]

def read_until(sock, marker, limit=65536):
    data = b""
    while marker not in data and len(data) < limit:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data

def make_context(verify_with=None):
    # Verification settings do not change the ClientHello: every mode sends the same one.
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_3
    if verify_with:
        context.load_verify_locations(verify_with)
    else:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    return context

def client_hello():
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = make_context().wrap_bio(incoming, outgoing, server_hostname=sni)
    try:
        tls.do_handshake()
    except ssl.SSLWantReadError:
        pass
    return outgoing.read()

def read_some(sock, wait=0.5):
    # Everything the server sends within `wait` after its first byte.
    data = sock.recv(65536)
    sock.settimeout(wait)
    try:
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    sock.settimeout(10)
    return data

sock = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=(source, 0) if source else None)
if target:
    sock.sendall(("CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (target, target)).encode())
    head = read_until(sock, b"\r\n\r\n")
    if not head.startswith(b"HTTP/1.1 200"):
        print("connect-refused " + head.split(b"\r\n")[0].decode(errors="replace"))
        sys.exit(0)

junk = bytes([0x17, 0x03, 0x03, 0x00, 0x20]) + bytes(range(32))
alert = bytes([0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 48])  # fatal unknown_ca, unencrypted
if mode == "hello-and-junk":
    sock.sendall(client_hello() + junk)
elif mode == "hello-and-alert":
    sock.sendall(client_hello() + alert)
elif mode == "alert-after-flight":
    sock.sendall(client_hello())
    flight = read_some(sock)
    sock.sendall(alert)
elif mode == "close-after-flight":
    sock.sendall(client_hello())
    flight = read_some(sock)
    sock.close()
    print("flight %d" % len(flight))
    sys.exit(0)
elif mode == "record-version-0300":
    hello = bytearray(client_hello())
    hello[1:3] = b"\x03\x00"
    sock.sendall(bytes(hello))
    print(read_some(sock)[:6].hex())
    sys.exit(0)
elif mode == "handshake":
    tls = make_context(cafile).wrap_socket(sock, server_hostname=sni)
    tls.sendall(("GET /echo HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % sni).encode())
    print(read_until(tls, b"\r\n").split(b"\r\n")[0].decode(errors="replace"))
    sys.exit(0)
elif mode == "slow-handshake":
    time.sleep(delay)
    context = ssl.create_default_context(cafile=cafile)
    tls = context.wrap_socket(sock, server_hostname=sni)
    tls.sendall(("GET /echo HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % sni).encode())
    print(read_until(tls, b"\r\n").split(b"\r\n")[0].decode(errors="replace"))
    sys.exit(0)
try:
    rest = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        rest += chunk
    print("closed %d" % len(rest))
except ConnectionResetError:
    print("reset")
"""#
}
