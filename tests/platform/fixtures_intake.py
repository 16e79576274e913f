"""Archive builders for the intake tests: good bot folders, and archives bad in one way each."""

from __future__ import annotations

import io
import shutil
import stat
import struct
import tarfile
import zipfile
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RANDOM_BOT = ROOT / "bots" / "examples" / "random"
MiB = 1024 * 1024
BOT_PY = b"print('a bot')\n"


def manifest(name: str = "my-random", games: str = '["oh-hell"]', command: str | None = None) -> bytes:
    command = command if command is not None else 'command = ["python", "bot.py", "--address", "{address}"]'
    return f'name = "{name}"\ngames = {games}\n{command}\n'.encode()


def random_copy(tmp_path: Path, name: str = "my-random") -> Path:
    """A copy of bots/examples/random, renamed in its manifest."""
    folder = tmp_path / name
    shutil.copytree(RANDOM_BOT, folder)
    path = folder / "septet-bot.toml"
    path.write_text(path.read_text().replace('name = "random"', f'name = "{name}"'))
    return folder


def file_info(name: str, data: bytes, mode: int = 0o644) -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mode = mode
    return info, data


def special_info(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info, b""


def tar_bytes(members: Iterable[tuple[tarfile.TarInfo, bytes]], *, gz: bool = True) -> bytes:
    """A tar (gzip-compressed unless gz=False) holding exactly these members, in this order."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if gz else "w", format=tarfile.GNU_FORMAT) as archive:
        for info, data in members:
            archive.addfile(info, io.BytesIO(data) if info.isreg() else None)
    return buffer.getvalue()


def good_members(name: str = "my-random") -> list[tuple[tarfile.TarInfo, bytes]]:
    return [file_info("septet-bot.toml", manifest(name)), file_info("bot.py", BOT_PY)]


def zip_bytes(entries: Iterable[tuple[str | zipfile.ZipInfo, bytes]]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries:
            archive.writestr(name, data)
    return buffer.getvalue()


def zip_symlink(name: str, target: str) -> tuple[zipfile.ZipInfo, bytes]:
    info = zipfile.ZipInfo(name)
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info, target.encode()


def zip_with_declared_size(entries: list[tuple[str, bytes]], name: str, declared: int) -> bytes:
    """A zip whose local and central headers both say `name` holds `declared` bytes (a lie)."""
    data = bytearray(zip_bytes(entries))
    encoded = name.encode()
    for signature, size_offset, name_offset in ((b"PK\x03\x04", 22, 30), (b"PK\x01\x02", 24, 46)):
        start = 0
        while (start := data.find(signature, start)) >= 0:
            length_offset = 26 if signature == b"PK\x03\x04" else 28
            (name_length,) = struct.unpack_from("<H", data, start + length_offset)
            if data[start + name_offset : start + name_offset + name_length] == encoded:
                struct.pack_into("<I", data, start + size_offset, declared)
            start += 4
    return bytes(data)


def tar_with_lying_size(actual: bytes, declared: int) -> bytes:
    """An uncompressed tar: the manifest, then `bot.py` whose header says `declared` bytes while
    `actual` follows it, then the end-of-archive blocks."""
    head = tar_bytes([file_info("septet-bot.toml", manifest())], gz=False)
    head = head[: _members_end(head)]
    info = tarfile.TarInfo("bot.py")
    info.size = declared
    body = actual + b"\0" * (-len(actual) % 512)
    return head + info.tobuf(format=tarfile.GNU_FORMAT) + body + b"\0" * 1024


def _members_end(tar: bytes) -> int:
    with tarfile.open(fileobj=io.BytesIO(tar)) as archive:
        last = archive.getmembers()[-1]
        return last.offset_data + (-(-last.size // 512)) * 512
