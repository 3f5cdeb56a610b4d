#!/usr/bin/env python3
"""Capture the first bytes a TLS client sends, as hex: the fixtures of TLSClientHelloTests.

Listens on 127.0.0.1 (a free port), starts the client command with every PORT in its arguments
replaced by that port, reads what the client sends for one second of silence, and prints it.
The client's CA-bundle variables are removed; the client fails its handshake, which is fine.

    fuzz/capture-client-hellos.py curl -s --http1.1 https://name.test:PORT/ --resolve name.test:PORT:127.0.0.1
    fuzz/capture-client-hellos.py openssl s_client -connect 127.0.0.1:PORT -servername x.test -alpn h2,http/1.1
"""
import os
import socket
import subprocess
import sys


def capture(command):
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(10)
    port = str(server.getsockname()[1])
    environment = {k: v for k, v in os.environ.items() if k not in ("SSL_CERT_FILE", "SSL_CERT_DIR", "CURL_CA_BUNDLE")}
    client = subprocess.Popen([argument.replace("PORT", port) for argument in command], env=environment,
                              stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        connection, _ = server.accept()
        connection.settimeout(1.0)
        data = b""
        try:
            while chunk := connection.recv(65536):
                data += chunk
        except socket.timeout:
            pass
        connection.close()
        return data
    finally:
        server.close()
        client.kill()
        client.wait()


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0 if len(sys.argv) >= 2 else 2)
    print(capture(sys.argv[1:]).hex())
