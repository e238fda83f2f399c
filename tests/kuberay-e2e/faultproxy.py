"""A fault-injecting proxy in front of the e2e kube-apiserver, for one client (the operator).

It listens where the stage says (stage.proxy_ends(): loopback for the stand-in's operator, the
node's address for one in a Pod) and terminates TLS with the API server's own certificate (so
the client only changes the port it connects to), reads each HTTP/1.1 request whole, asks `decide(method, path)` what to do, and either
forwards it on a fresh TLS connection of its own (as the admin user, `Connection: close`, the
answer piped back until the server closes, so watches stream through) or drops it unanswered.
One request per client connection: clients see `Connection: close` and reconnect. HTTP/2 is not
offered (no ALPN), so client-go speaks HTTP/1.1 to it. Standard library only."""

import socket
import ssl
import threading


class FaultProxy(threading.Thread):
    """decide(method, path) -> True to forward, False to drop the request (the connection closes
    without an answer, as when the client dies before the server sees the write)."""

    def __init__(self, stage, decide):
        super().__init__(daemon=True)
        self.decide = decide
        ends = stage.proxy_ends()
        self.upstream = ends["upstream"]
        self.server_ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.server_ctx.load_cert_chain(ends["server_cert"], ends["server_key"])
        self.upstream_ctx = ssl.create_default_context(cafile=ends["ca"])
        self.upstream_ctx.load_cert_chain(ends["admin_cert"], ends["admin_key"])
        self.listener = socket.create_server((ends["listen"], 0))
        self.address = (ends["listen"], self.listener.getsockname()[1])
        self.closed = False

    def run(self):
        while not self.closed:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(conn,), daemon=True).start()

    def close(self):
        self.closed = True
        self.listener.close()

    def serve(self, raw):
        try:
            with self.server_ctx.wrap_socket(raw, server_side=True) as client:
                head, body = read_request(client)
                if head is None:
                    return
                method, path = head.split(b" ", 2)[:2]
                if not self.decide(method.decode(), path.decode()):
                    return
                self.forward(client, head, body)
        except (OSError, ssl.SSLError, ValueError):
            pass  # the client went away, or the operator was killed mid-request
        finally:
            raw.close()

    def forward(self, client, head, body):
        lines = [line for line in head.split(b"\r\n")
                 if not line.lower().startswith((b"connection:", b"keep-alive:"))]
        request = b"\r\n".join(lines + [b"Connection: close"]) + b"\r\n\r\n" + body
        upstream = socket.create_connection(self.upstream, timeout=None)
        with self.upstream_ctx.wrap_socket(upstream, server_hostname=self.upstream[0]) as up:
            up.sendall(request)
            while True:
                chunk = up.recv(65536)
                if not chunk:
                    return
                client.sendall(chunk)


def read_request(sock):
    """(request head without the blank line, body) or (None, None) at end of stream. Bodies by
    Content-Length or chunked (forwarded re-framed by length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return None, None
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    headers = {}
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        headers[name.strip().lower()] = value.strip()
    if b"content-length" in headers:
        length = int(headers[b"content-length"])
        while len(rest) < length:
            chunk = sock.recv(65536)
            if not chunk:
                raise ValueError("body cut short")
            rest += chunk
        return head, rest[:length]
    if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        while not rest.endswith(b"0\r\n\r\n"):
            chunk = sock.recv(65536)
            if not chunk:
                raise ValueError("chunked body cut short")
            rest += chunk
        body = dechunk(rest)
        head = b"\r\n".join(line for line in head.split(b"\r\n")
                            if not line.lower().startswith(b"transfer-encoding:"))
        return head + f"\r\nContent-Length: {len(body)}".encode(), body
    return head, b""


def dechunk(data):
    body = b""
    while True:
        size_line, data = data.split(b"\r\n", 1)
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            return body
        body, data = body + data[:size], data[size + 2:]
