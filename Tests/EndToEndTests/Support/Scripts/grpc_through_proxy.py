"""A real gRPC server and client (Debian's python3-grpcio) for HTTP2GRPCTests.

The server listens on 127.0.0.1 with TLS (the certificate given), the client reaches it through
the proxy (CONNECT, then the proxy's minted certificate, trusted through --proxy-ca) and makes
the four kinds of call plus one that fails with a status. Raw bytes, no protobuf: the methods
have no serializers. Prints one JSON object with what each call returned.
"""
import argparse
import json
import sys
from concurrent import futures

import grpc


def unary(request, context):
    return b"unary:" + request


def server_stream(request, context):
    for index in range(3):
        yield b"part%d:" % index + request


def client_stream(requests, context):
    return b"+".join(requests)


def bidi(requests, context):
    for message in requests:
        yield b"echo:" + message


def fail(request, context):
    context.abort(grpc.StatusCode.NOT_FOUND, "no such thing")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cert", required=True)
    parser.add_argument("--key", required=True)
    parser.add_argument("--proxy-ca", required=True)
    parser.add_argument("--proxy-port", type=int, required=True)
    arguments = parser.parse_args()

    handlers = {
        "Unary": grpc.unary_unary_rpc_method_handler(unary),
        "ServerStream": grpc.unary_stream_rpc_method_handler(server_stream),
        "ClientStream": grpc.stream_unary_rpc_method_handler(client_stream),
        "Bidi": grpc.stream_stream_rpc_method_handler(bidi),
        "Fail": grpc.unary_unary_rpc_method_handler(fail),
    }
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("test.Echo", handlers),))
    with open(arguments.key, "rb") as key, open(arguments.cert, "rb") as cert:
        credentials = grpc.ssl_server_credentials([(key.read(), cert.read())])
    port = server.add_secure_port("127.0.0.1:0", credentials)
    server.start()

    with open(arguments.proxy_ca, "rb") as proxy_ca:
        client_credentials = grpc.ssl_channel_credentials(root_certificates=proxy_ca.read())
    options = [("grpc.http_proxy", "http://127.0.0.1:%d" % arguments.proxy_port)]
    result = {}
    with grpc.secure_channel("localhost:%d" % port, client_credentials, options=options) as channel:
        timeout = 10
        result["unary"] = channel.unary_unary("/test.Echo/Unary")(b"hi", timeout=timeout).decode()
        result["server_stream"] = [m.decode() for m in channel.unary_stream("/test.Echo/ServerStream")(b"x", timeout=timeout)]
        result["client_stream"] = channel.stream_unary("/test.Echo/ClientStream")(iter([b"a", b"b", b"c"]), timeout=timeout).decode()
        result["bidi"] = [m.decode() for m in channel.stream_stream("/test.Echo/Bidi")(iter([b"1", b"2"]), timeout=timeout)]
        try:
            channel.unary_unary("/test.Echo/Fail")(b"", timeout=timeout)
            result["fail"] = "succeeded"
        except grpc.RpcError as error:
            result["fail"] = {"code": error.code().name, "details": error.details()}
    server.stop(0)
    json.dump(result, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
