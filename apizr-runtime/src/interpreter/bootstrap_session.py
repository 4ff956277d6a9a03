# apizr interpreter bootstrap, docker-session part (stdlib only). Prepended to bootstrap.py
# for session containers only: every other run compiles the bootstrap's source at start, and
# this part would cost them its compile time. It uses the bootstrap's helpers (`_frame`,
# `_prepare`, `_exec`, `_status`, `_flush`, `_dumpable`, `_oom_kills`, `_detach_stdin`),
# defined after it and called only once the whole source has run up to the dispatch.
import posix, sys


def _listing():
    # Every entry beneath the workspace, links not followed: what a call changed.
    out, stack = [], ['.']
    while stack:
        d = stack.pop()
        try:
            entries = list(posix.scandir(d))
        except OSError:
            continue
        for e in entries:
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            path = d + '/' + e.name
            out.append((path, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino))
            if e.is_dir(follow_symlinks=False):
                stack.append(path)
    out.sort()
    return out


def _put(kind, rel, data):
    # Write `rel` beneath the workspace (PID 1's working directory), one component at a time
    # relative to its parent's descriptor with O_NOFOLLOW: a link the code planted anywhere on
    # the way fails the copy instead of redirecting it. A FIFO or device at the destination
    # is refused (O_NONBLOCK: opening one never blocks).
    parts = rel.split('/')
    if any(p in ('', '.', '..') for p in parts):
        raise ValueError('expected a relative path of plain names')
    nofollow = posix.O_NOFOLLOW | posix.O_CLOEXEC
    fd = posix.open('.', posix.O_RDONLY | posix.O_DIRECTORY | nofollow)
    try:
        for p in parts[:-1]:
            nfd = posix.open(p, posix.O_RDONLY | posix.O_DIRECTORY | nofollow, dir_fd=fd)
            posix.close(fd)
            fd = nfd
        leaf = parts[-1]
        if kind == b'd':
            try:
                posix.mkdir(leaf, 0o700, dir_fd=fd)
            except FileExistsError:
                pass
            posix.close(posix.open(leaf, posix.O_RDONLY | posix.O_DIRECTORY | nofollow, dir_fd=fd))
            return
        out = posix.open(leaf, posix.O_WRONLY | posix.O_CREAT | posix.O_NONBLOCK | nofollow,
                         0o600, dir_fd=fd)
        try:
            if (posix.fstat(out).st_mode & 0o170000) != 0o100000:
                raise ValueError('not a regular file')
            posix.ftruncate(out, 0)
            view = memoryview(data)
            while view:
                view = view[posix.write(out, view):]
        finally:
            posix.close(out)
    finally:
        posix.close(fd)


def _hold_session(req):
    # PID 1 of a docker session. The code runs in a forked worker that keeps `__main__`
    # between calls; PID 1 (not dumpable) reads the host's frames — `c` a call, `f` a file,
    # `d` a directory, each `kind, u16 marker length, marker, payload` — and alone writes
    # `<marker>:<status>:<signal>:<changed>:<oom>:<ended>\n` after each. The worker never
    # sees a marker: it gets each call's code with a fresh token and answers `<token>:<status>`
    # on a private pipe, so the code can neither read the marker nor end a call early with a
    # stale answer. `changed` says whether the workspace listing differs from the one at the
    # call's start (the host fetches the archive only then); `ended` that the worker is gone
    # (the session is over). If stdin closes (the host died or closed the session), every
    # process of the container is killed and PID 1 exits: the engine removes the container.
    _dumpable(0)
    cmd_r, cmd_w = posix.pipe()
    done_r, done_w = posix.pipe()
    pid = posix.fork()
    if pid == 0:
        _dumpable(1)
        posix.close(cmd_w)
        posix.close(done_r)
        _detach_stdin()
        _serve_calls(req, cmd_r, lambda line: posix.write(done_w, line))
    posix.close(cmd_r)
    posix.close(done_w)
    import select
    pidfd = posix.pidfd_open(pid)
    pending = bytearray()

    def orphaned():
        try:
            posix.kill(-1, 9)
        except OSError:
            pass
        posix._exit(125)

    def take_stdin():
        chunk = posix.read(0, 65536)
        if not chunk:
            orphaned()
        pending.extend(chunk)

    def next_frame():
        while len(pending) < 8 or len(pending) < 8 + int.from_bytes(pending[:8], 'big'):
            take_stdin()
        n = int.from_bytes(pending[:8], 'big')
        body = bytes(pending[8:8 + n])
        del pending[:8 + n]
        return body

    ended = False
    wstatus = None
    while True:
        body = next_frame()
        kind, n = body[:1], int.from_bytes(body[1:3], 'big')
        marker, payload = body[3:3 + n], body[3 + n:]
        status = signal = changed = 0
        if ended:
            status = 125
        elif kind == b'c':
            token = posix.urandom(16).hex().encode()
            before = _listing()
            posix.set_blocking(done_r, False)
            try:
                while posix.read(done_r, 65536):
                    pass
            except BlockingIOError:
                pass
            posix.set_blocking(done_r, True)
            answer = None
            try:
                posix.write(cmd_w, (len(payload) + 32).to_bytes(8, 'big') + token + payload)
            except OSError:
                pass
            poller = select.poll()
            poller.register(0, select.POLLIN | select.POLLHUP)
            poller.register(done_r, select.POLLIN)
            poller.register(pidfd, select.POLLIN)
            while answer is None and not ended:
                for fd, _ in poller.poll():
                    if fd == 0:
                        take_stdin()
                    elif fd == done_r:
                        for row in posix.read(done_r, 65536).split(b'\n'):
                            t, _, s = row.partition(b':')
                            if t == token and s.lstrip(b'-').isdigit():
                                answer = int(s)
                    elif fd == pidfd:
                        ended = True
            if answer is not None:
                status = answer
            else:
                if wstatus is None:
                    wstatus = posix.waitpid(pid, 0)[1]
                status = posix.waitstatus_to_exitcode(wstatus)
                if status < 0:
                    signal = -status
                    status = 128 + signal
                try:
                    posix.kill(-1, 9)
                except OSError:
                    pass
            changed = 1 if _listing() != before else 0
        elif kind in (b'f', b'd'):
            try:
                _put(kind, payload[2:2 + int.from_bytes(payload[:2], 'big')].decode(),
                     payload[2 + int.from_bytes(payload[:2], 'big'):])
            except (OSError, ValueError, UnicodeDecodeError) as e:
                posix.write(2, ('apizr-copy: %s\n' % e).encode())
                status = 1
        else:
            status = 2
        # Orphans the code left (a subprocess whose parent exited) are reaped here.
        while True:
            try:
                reaped, st = posix.waitpid(-1, posix.WNOHANG)
            except ChildProcessError:
                break
            if reaped == 0:
                break
            if reaped == pid:
                wstatus, ended = st, True
        line = marker + (':%d:%d:%d:%d:%d\n' % (
            status, signal, changed, _oom_kills(), 1 if ended else 0)).encode()
        posix.write(1, line)
        posix.write(2, line)

