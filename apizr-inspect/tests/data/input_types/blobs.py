"""bytes and bytearray: base64 JSON strings under readiness v2 (as inputs only)."""
from typing import NamedTuple, Optional


class Packet(NamedTuple):
    body: bytes


def size(data: bytes) -> int:
    return len(data)


def grow(buf: bytearray, extra: int = 1) -> int:
    buf.extend(b"\0" * extra)
    return len(buf)


def chunks(parts: list[bytes], label: Optional[bytes] = None) -> int:
    return len(parts) + len(label or b"")


def keyed(blobs: dict[str, bytearray], unique: set[bytes]) -> int:
    return len(blobs) + len(unique)


# Near-misses.
def echo(data: bytes) -> bytes:  # ready, but its result is not JSON: READY-016, `any`
    return data


def view(data: memoryview) -> int:  # READY-013 under v2 too
    return len(data)


def record(data: bytes) -> Packet:  # a returned class holding bytes: READY-016 too
    return Packet(data)
