"""Hostile bot: a user namespace (where it would be root again) and ptrace of a sibling process.

At its first decision it calls unshare(CLONE_NEWUSER), then starts a child and tries to attach to
it with ptrace and to read its memory with process_vm_readv. Any of them working is a breach.
"""

import ctypes
import subprocess

from referee.botkit.sdk import Bot, serve

CLONE_NEWUSER = 0x10000000
PTRACE_ATTACH = 16
PTRACE_DETACH = 17


def attack() -> list[str]:
    libc = ctypes.CDLL(None, use_errno=True)
    breaches = []
    if libc.unshare(CLONE_NEWUSER) == 0:
        breaches.append("unshare(CLONE_NEWUSER) made a user namespace")
    sibling = subprocess.Popen(["sleep", "30"])
    try:
        if libc.ptrace(PTRACE_ATTACH, sibling.pid, None, None) == 0:
            breaches.append(f"ptrace attached to {sibling.pid}")
            libc.ptrace(PTRACE_DETACH, sibling.pid, None, None)
        buffer = ctypes.create_string_buffer(16)
        local = (ctypes.c_void_p * 2)(ctypes.cast(buffer, ctypes.c_void_p), ctypes.c_void_p(16))
        remote = (ctypes.c_void_p * 2)(ctypes.c_void_p(0x400000), ctypes.c_void_p(16))
        libc.process_vm_readv.restype = ctypes.c_ssize_t
        if libc.process_vm_readv(sibling.pid, local, 1, remote, 1, 0) >= 0:
            breaches.append("process_vm_readv read a sibling's memory")
        elif ctypes.get_errno() not in (1,):  # EFAULT/ESRCH: the call itself was allowed
            breaches.append(f"process_vm_readv was allowed (errno {ctypes.get_errno()})")
    finally:
        sibling.kill()
        sibling.wait()
    return breaches


class NamespacesPtrace(Bot):
    name = "hostile-namespaces-ptrace"

    def __init__(self) -> None:
        super().__init__()
        self.tried = False

    def decide(self, info, legal):
        if not self.tried:
            self.tried = True
            breaches = attack()
            if breaches:
                raise RuntimeError("BREACH: " + "; ".join(breaches))
        return legal[0]


if __name__ == "__main__":
    serve(NamespacesPtrace())
