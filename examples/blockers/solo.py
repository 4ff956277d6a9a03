"""A top-level module: no package to wait for; its function has an input type reason only."""
import socket


def stamp(when: socket.socket) -> str:
    return str(when.getsockname())
