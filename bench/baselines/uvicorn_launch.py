"""Run the uvicorn CLI, optionally with the TCP_NODELAY fix for ``--workers N``.

    python bench/baselines/uvicorn_launch.py [--tcp-nodelay-fix] UVICORN-ARGS...

With ``--workers N`` (N > 1) uvicorn binds the listening socket itself
(``Config.bind_socket``) with ``proto`` left at 0; accepted sockets inherit it and asyncio
only sets ``TCP_NODELAY`` when ``proto == IPPROTO_TCP``, so Nagle's algorithm meets the
client's delayed ACK and every keep-alive request after the first on a connection takes
~40 ms on Linux (uvicorn issue #3149, open; the single-process path is unaffected).
``--tcp-nodelay-fix`` re-wraps the bound socket's descriptor with ``IPPROTO_TCP`` before
the workers are spawned, which is what the proposed upstream fix does.
"""

from __future__ import annotations

import socket
import sys


def apply_tcp_nodelay_fix() -> None:
    import uvicorn.config

    original = uvicorn.config.Config.bind_socket

    def bind_socket(self: uvicorn.config.Config) -> socket.socket:
        sock = original(self)
        if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.proto == 0:
            fixed = socket.socket(sock.family, sock.type, socket.IPPROTO_TCP, fileno=sock.detach())
            fixed.set_inheritable(True)
            return fixed
        return sock

    uvicorn.config.Config.bind_socket = bind_socket  # type: ignore[method-assign]


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--tcp-nodelay-fix" in args:
        args.remove("--tcp-nodelay-fix")
        apply_tcp_nodelay_fix()
    from uvicorn.main import main

    sys.argv = ["uvicorn", *args]
    main()
