"""Plain socket servers the tests and benchmarks watch: what reached them, counted."""

from __future__ import annotations

import socket
import threading


class TcpListener:
    """Accepts connections on ``ip``:``port`` in a thread of its own and hands each to
    ``handle`` (by default: closed at once). ``close`` stops it."""

    def __init__(self, ip: str, port: int = 80) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((ip, port))
        self._sock.listen(16)
        self._sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, peer = self._sock.accept()
            except (TimeoutError, OSError):
                continue
            self.handle(conn, peer)

    def handle(self, conn: socket.socket, peer: tuple[str, int]) -> None:
        conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self._sock.close()


class UdpCounter:
    """Counts the datagrams reaching a loopback UDP port of its own (``port``)."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port: int = self.sock.getsockname()[1]
        self.packets = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._count, daemon=True)
        self._thread.start()

    def _count(self) -> None:
        while not self._stop.is_set():
            try:
                self.sock.recvfrom(65536)
                self.packets += 1
            except OSError:
                continue

    def close(self) -> int:
        """Stop counting; the datagrams counted."""
        self._stop.set()
        self._thread.join()
        self.sock.close()
        return self.packets
