"""The websocket phase of scripts/bench: echo throughput of 1 KiB messages, direct and through
the proxy (CONNECT, then the upgrade inside the tunnel), with Debian's python3-websockets.

Starts its own echo server on 127.0.0.1, sends MESSAGES messages as fast as the connection takes
them while reading the echoes, and prints `direct MSGS_PER_S` and `proxied MSGS_PER_S`. With
--db (the proxy's traffic.sqlite) it then waits for the capture and prints `stored N`: the
messages stored for the proxied connection's flow (each sent one and its echo, plus the closes).
"""
import argparse
import asyncio
import os
import socket
import sqlite3
import sys
import time

import websockets


async def echo(connection, path=None):
    async for message in connection:
        await connection.send(message)


def tunnel(proxy_port, port):
    sock = socket.create_connection(("127.0.0.1", proxy_port), timeout=10)
    sock.sendall(b"CONNECT 127.0.0.1:%d HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (port, port))
    answer = b""
    while b"\r\n\r\n" not in answer:
        chunk = sock.recv(4096)
        if not chunk:
            raise RuntimeError("the proxy closed the CONNECT")
        answer += chunk
    if b" 200" not in answer.split(b"\r\n")[0]:
        raise RuntimeError("CONNECT refused: %r" % answer[:200])
    sock.settimeout(None)
    return sock


async def run(port, count, size, sock=None):
    payload = os.urandom(size)
    async with websockets.connect("ws://127.0.0.1:%d/echo" % port, sock=sock, compression=None,
                                  max_queue=None, max_size=None) as connection:
        started = time.monotonic()

        async def send_all():
            for _ in range(count):
                await connection.send(payload)

        sender = asyncio.create_task(send_all())
        for _ in range(count):
            await connection.recv()
        await sender
        elapsed = time.monotonic() - started
    return count / elapsed


def stored_messages(db, after_id, timeout=15):
    deadline = time.monotonic() + timeout
    count = -1
    while time.monotonic() < deadline:
        try:
            with sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=5) as connection:
                row = connection.execute(
                    "SELECT COALESCE(SUM(message_count), 0) FROM flows WHERE id > ? AND status = 101", (after_id,)).fetchone()
                count = row[0]
        except sqlite3.Error:
            pass
        time.sleep(0.5)
        if count >= 0:
            last = count
            time.sleep(0.5)
            with sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=5) as connection:
                count = connection.execute(
                    "SELECT COALESCE(SUM(message_count), 0) FROM flows WHERE id > ? AND status = 101", (after_id,)).fetchone()[0]
            if count == last and count > 0:
                return count
    return count


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--proxy-port", type=int, required=True)
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--size", type=int, default=1024)
    parser.add_argument("--db")
    arguments = parser.parse_args()
    server = await websockets.serve(echo, "127.0.0.1", 0, compression=None, max_size=None)
    port = server.sockets[0].getsockname()[1]
    after_id = 0
    if arguments.db:
        with sqlite3.connect("file:%s?mode=ro" % arguments.db, uri=True, timeout=5) as connection:
            after_id = connection.execute("SELECT COALESCE(MAX(id), 0) FROM flows").fetchone()[0]
    print("direct %.1f" % await run(port, arguments.messages, arguments.size), flush=True)
    print("proxied %.1f" % await run(port, arguments.messages, arguments.size,
                                      tunnel(arguments.proxy_port, port)), flush=True)
    server.close()
    await server.wait_closed()
    if arguments.db:
        print("stored %d" % stored_messages(arguments.db, after_id), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
