"""A real WebSocket server and client (Debian's python3-websockets) for WebSocketCaptureTests.

The server listens on 127.0.0.1 (plain, or TLS with the certificate given) and echoes every
message; the client reaches it through the proxy's CONNECT (then, for wss, the proxy's minted
certificate, trusted through --proxy-ca), with permessage-deflate on or off, sends a text, a
binary, a fragmented and a large compressible message and a ping, reads the echoes, and closes
with 1000 "done". Prints one JSON object: what was sent, in order, as hex.
"""
import argparse
import asyncio
import json
import socket
import ssl
import sys

import websockets


async def echo(connection, path=None):
    async for message in connection:
        await connection.send(message)


def connect_through_proxy(proxy_port, host, port):
    sock = socket.create_connection(("127.0.0.1", proxy_port), timeout=10)
    sock.sendall(("CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host, port, host, port)).encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(4096)
        if not chunk:
            raise RuntimeError("proxy closed during CONNECT")
        answer += chunk
    if b" 200" not in answer.split(b"\r\n")[0]:
        raise RuntimeError("CONNECT refused: %r" % answer)
    sock.settimeout(None)
    return sock


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy-port", type=int, required=True)
    parser.add_argument("--cert")
    parser.add_argument("--key")
    parser.add_argument("--proxy-ca")
    parser.add_argument("--no-compression", action="store_true")
    arguments = parser.parse_args()
    compression = None if arguments.no_compression else "deflate"

    server_tls = None
    if arguments.cert:
        server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server_tls.load_cert_chain(arguments.cert, arguments.key)
    server = await websockets.serve(echo, "127.0.0.1", 0, ssl=server_tls, compression=compression)
    port = server.sockets[0].getsockname()[1]

    sock = connect_through_proxy(arguments.proxy_port, "localhost", port)
    client_tls = None
    scheme = "ws"
    if arguments.cert:
        client_tls = ssl.create_default_context(cafile=arguments.proxy_ca)
        scheme = "wss"
    large = ("the quick brown fox " * 5000).encode()
    sent = []
    async with websockets.connect("%s://localhost:%d/chat" % (scheme, port), sock=sock, ssl=client_tls,
                                  server_hostname="localhost" if client_tls else None,
                                  compression=compression, max_size=None) as connection:
        await connection.send("hello")
        sent.append(["text", b"hello".hex()])
        assert await connection.recv() == "hello"
        binary = bytes(range(256))
        await connection.send(binary)
        sent.append(["binary", binary.hex()])
        assert await connection.recv() == binary
        await connection.send(["frag", "mented"])  # one message in two frames
        sent.append(["text", b"fragmented".hex()])
        assert await connection.recv() == "fragmented"
        await connection.send(large)
        sent.append(["binary", large.hex()])
        assert await connection.recv() == large
        pong = await connection.ping(b"are you there")
        await pong
        await connection.close(1000, "done")
    server.close()
    await server.wait_closed()
    json.dump({"sent": sent, "compression": compression is not None}, sys.stdout)


if __name__ == "__main__":
    asyncio.run(main())
