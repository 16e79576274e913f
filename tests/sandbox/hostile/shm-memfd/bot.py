"""Hostile bot: memory outside its processes' heaps, kept after detaching, at its first decision.

SysV shared memory (shmget, touched, detached: it would stay after the bot's processes end), then
memfds of CHUNK bytes each written through write() (no mapping, so an address-space limit never
sees them; each under the file-size limit), until they hold BREACH_AT bytes. Either working is a
breach: shmget must be refused outright, and the memfds must count to the sandbox's memory (the
kernel then kills the bot, which forfeits).
"""

import ctypes
import os

from referee.botkit.sdk import Bot, serve

IPC_PRIVATE = 0
IPC_CREAT = 0o1000
SHM_BYTES = 64 << 20
CHUNK = 16 << 20
BREACH_AT = 768 << 20


def shared_memory() -> str | None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    segment = libc.shmget(IPC_PRIVATE, ctypes.c_size_t(SHM_BYTES), IPC_CREAT | 0o600)
    if segment < 0:
        return None
    address = libc.shmat(segment, None, 0)
    if address not in (None, ctypes.c_void_p(-1).value):
        ctypes.memset(address, 1, SHM_BYTES)
        libc.shmdt(ctypes.c_void_p(address))
    return f"SysV segment {segment} of {SHM_BYTES} bytes made and left behind"


def memfd_hoard() -> str | None:
    """Many memfds of one CHUNK each (under any file-size limit), all kept open."""
    block = b"m" * CHUNK
    kept = []
    while len(kept) * CHUNK < BREACH_AT:
        fd = os.memfd_create(f"hoard-{len(kept)}")
        os.write(fd, block)
        kept.append(fd)
    return f"{len(kept)} memfds hold {len(kept) * CHUNK} bytes"


class ShmMemfd(Bot):
    name = "hostile-shm-memfd"

    def __init__(self) -> None:
        super().__init__()
        self.tried = False

    def decide(self, info, legal):
        if not self.tried:
            self.tried = True
            for attack in (shared_memory, memfd_hoard):
                found = attack()
                if found:
                    raise RuntimeError("BREACH: " + found)
        return legal[0]


if __name__ == "__main__":
    serve(ShmMemfd())
