"""Direct-mode attacks on the response channel: a thread left behind writes a forged answer
on the worker's private response descriptor, between calls or during another call."""

import os
import sys
import threading
import time


def _forge(delay: float) -> None:
    time.sleep(delay)
    # Another call's nonce is unknowable: this one is a guess (the last call's would be stale).
    body = ("0" * 32 + "\nsuccess\n\"forged\"\n").encode()
    out = sys.modules["__main__"]._OUT
    os.write(out, len(body).to_bytes(8, "big") + body)


def plant(delay: float) -> str:
    threading.Thread(target=_forge, args=(delay,), daemon=True).start()
    return "planted"


def echo(word: str) -> str:
    return word


def nap(seconds: float) -> str:
    time.sleep(seconds)
    return "awake"
