"""A server on this machine that speaks first, for the tests of a --scheduler address that is no
dask scheduler (an SSH banner, an HTTP response)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def speaking_first(banner: bytes) -> Iterator[str]:
    """The address of a server that writes ``banner`` to whoever connects, for the block."""
    server = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []

    def serve() -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = server.accept()
                connection.sendall(banner)
                held.append(connection)  # kept open: the client is left to read what it got

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"tcp://127.0.0.1:{server.getsockname()[1]}"
    finally:
        server.close()
        for connection in held:
            connection.close()
