"""A rendezvous over TCP for jobs without MPI (torchrun's MASTER_ADDR/MASTER_PORT): rank 0
serves, every rank (rank 0 too) connects; each exchange is an all-gather of small bytes.

It carries what NCCL needs before it can talk (its unique id) and the group's checks,
never tensors."""
from __future__ import annotations

import socket
import struct
import threading
import time

from .errors import DistributedTimeoutError

_HEAD = struct.Struct("<iq")       # rank, length


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            raise ConnectionError("the peer closed the connection")
        out += chunk
    return bytes(out)


class StoreControl:
    """The control channel of a group whose ranks have no MPI between them."""

    def __init__(self, host: str, port: int, rank: int, size: int, timeout: float):
        self.rank, self.size, self.timeout = rank, size, timeout
        self._server = None
        if rank == 0:
            server = socket.create_server((host, port), reuse_port=False)
            server.settimeout(timeout)
            self._server = server
            self._peers: list = []
            threading.Thread(target=self._serve, daemon=True).start()
        deadline = time.monotonic() + timeout
        while True:
            try:
                self._sock = socket.create_connection((host, port), timeout=timeout)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise DistributedTimeoutError(
                        f"init_process_group: rank {rank} could not reach rank 0 at "
                        f"{host}:{port} (MASTER_ADDR:MASTER_PORT) within {timeout:g} s; is "
                        "rank 0 running, and the port free?") from None
                time.sleep(0.05)
        self._sock.sendall(_HEAD.pack(rank, 0))

    def _serve(self) -> None:
        """Rank 0's thread: accept every rank, then answer each round with all of it."""
        peers: dict[int, socket.socket] = {}
        try:
            while len(peers) < self.size:
                conn, _ = self._server.accept()
                conn.settimeout(None)
                rank, _ = _HEAD.unpack(_recv_exact(conn, _HEAD.size))
                peers[rank] = conn
            while True:
                parts = {}
                for conn in peers.values():
                    r, n = _HEAD.unpack(_recv_exact(conn, _HEAD.size))
                    parts[r] = _recv_exact(conn, n)
                reply = b"".join(_HEAD.pack(r, len(parts[r])) + parts[r]
                                 for r in range(self.size))
                for conn in peers.values():
                    conn.sendall(reply)
        except (OSError, ConnectionError):
            return                      # a rank left: the others' exchange times out
        finally:
            for conn in peers.values():
                conn.close()

    def allgather_bytes(self, data: bytes, group=None, kind: str = "control",
                        numbered: bool = True) -> list[bytes]:
        if group is not None and numbered and hasattr(group, "start"):
            group.start(kind)
        self._sock.settimeout(self.timeout)
        try:
            self._sock.sendall(_HEAD.pack(self.rank, len(data)) + data)
            out = []
            for _ in range(self.size):
                _, n = _HEAD.unpack(_recv_exact(self._sock, _HEAD.size))
                out.append(_recv_exact(self._sock, n))
        except (TimeoutError, ConnectionError) as exc:
            raise DistributedTimeoutError(
                f"ember.distributed: an exchange of the TCP rendezvous ({kind}) did not "
                f"complete within {self.timeout:g} s on rank {self.rank}: a rank did not "
                f"arrive or left ({type(exc).__name__})") from None
        return out

    def split(self, ranks):
        return self            # subgroups exchange over the same rendezvous (every rank)

    def close(self) -> None:
        self._sock.close()
        if self._server is not None:
            self._server.close()
