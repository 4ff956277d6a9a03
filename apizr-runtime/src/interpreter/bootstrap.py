# apizr interpreter bootstrap (stdlib only; run as `python -I -S -c <this>`).
#
# Reads one request from stdin: a u64 big-endian length, then a `marshal` dict
# {"code": str, "filename": str, "allowed": list|None, "seccomp": list[bytes]|None,
#  "site_dirs": list[str], "env_keep": list|None, "hold": bool, "session": bool}. `env_keep` drops every other
# environment variable first (containers: the engine and the image add some). Then stdin becomes /dev/null and the code runs as
# `__main__`, exactly as `python FILE` would run it (tracebacks, `sys.exit`, `from __future__`,
# line numbers), after, in order: the package directories are added to `sys.path`, the import
# guard is installed (an allowlist), the subprocess seccomp filter is installed.
#
# `hold` (containers): the code runs in a forked child; this process (PID 1 of the container)
# reads a second frame (a marker nobody else has seen), waits for the child, kills every
# other process of the container, writes `<marker>:<status>:<signal>:<files>:<oom>\n` on stdout
# and stderr (status as a shell reports it, the signal that ended the child or 0, whether the
# workspace holds any entry, the kernel's count of tasks killed at the container's memory
# limit), and waits for stdin to close before exiting with the child's status, so the host
# can copy the workspace out of the still-running container. If stdin closes while the code
# still runs (the host died), it kills every process of the container and exits at once.
# PID 1 is not dumpable, so the code (same uid) cannot read the marker from its memory.
#
# `session` (persistent sessions): the set-up (packages, guard, seccomp) happens once; then
# each further frame is one call — a 32-byte end marker, then the code — run in the same
# `__main__` namespace; after it, `<marker>:<status>\n` is written on stdout and stderr (after
# flushing both). The command channel is a private copy of stdin; the code's stdin is
# /dev/null. `sys.exit` ends the call with its status, not the session.
# `session` and `hold` together (docker sessions): PID 1 forks a session worker and serves the
# host's frames (calls and copies): `bootstrap_session.py`, prepended to this source only for
# session containers (every other run would pay for compiling it).
#
# After the code (every call of a session too), figures the code left open in
# `matplotlib.pyplot` are saved as PNG files in the workspace (`_save_figures`).
#
# Only modules already loaded by `-I -S` are imported on the common path (start-up cost).
import marshal, posix, sys


def _fail(message):
    # Set-up failed before the code ran (exit 125, like the launcher).
    posix.write(2, b'apizr-bootstrap: ' + message.encode() + b'\n')
    posix._exit(125)


def _read(n, fd=0):
    b = b''
    while len(b) < n:
        c = posix.read(fd, n - len(b))
        if not c:
            _fail('the request ended early')
        b += c
    return b


def _frame(fd=0):
    return _read(int.from_bytes(_read(8, fd), 'big'), fd)


def _detach_stdin():
    fd = posix.open('/dev/null', posix.O_RDONLY)
    posix.dup2(fd, 0)
    posix.close(fd)


def _guard(allowed):
    # The import allowlist at run time (the static check sees literal names only). Checked:
    # import statements and direct `__import__` / `importlib.import_module` calls made from
    # the user's code (`__main__`, `exec`'d namespaces, any globals that are not a registered
    # module's). Not checked: imports made by library modules, and implicit imports the
    # interpreter's C code makes on the user's behalf (`time.strptime` importing `_strptime`;
    # those pass an empty list as `fromlist`). A guard, not a sandbox: the OS sandbox is the
    # boundary.
    import builtins
    allowed = frozenset(allowed)
    modules = sys.modules
    real_import = builtins.__import__
    own = globals()

    def from_user(g):
        if g is own:
            return False
        if not isinstance(g, dict):
            return True
        name = g.get('__name__')
        m = modules.get(name) if isinstance(name, str) else None
        return name == '__main__' or m is None or getattr(m, '__dict__', None) is not g

    def check(name, g):
        top = name.partition('.')[0]
        if top not in allowed and from_user(g):
            raise ImportError('import of %r is not allowed (allowed_imports)' % top, name=name)

    def guarded_import(name, globals=None, locals=None, fromlist=(), level=0):
        if level == 0 and type(fromlist) is not list:
            check(name, globals)
        return real_import(name, globals, locals, fromlist, level)

    builtins.__import__ = guarded_import
    import importlib
    real_import_module = importlib.import_module

    def import_module(name, package=None):
        absolute = name
        if name.startswith('.'):
            dots = len(name) - len(name.lstrip('.'))
            absolute = importlib._bootstrap._resolve_name(name[dots:], package or '', dots)
        check(absolute, sys._getframe(1).f_globals)
        return real_import_module(name, package)

    importlib.import_module = import_module


def _install_seccomp(programs):
    import ctypes

    class _Fprog(ctypes.Structure):
        _fields_ = [('len', ctypes.c_ushort), ('filter', ctypes.c_void_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    ulong = ctypes.c_ulong
    # PR_SET_NO_NEW_PRIVS, then PR_SET_SECCOMP / SECCOMP_MODE_FILTER per program.
    if libc.prctl(ctypes.c_int(38), ulong(1), ulong(0), ulong(0), ulong(0)) != 0:
        _fail('PR_SET_NO_NEW_PRIVS failed')
    for raw in programs:
        buf = ctypes.create_string_buffer(raw, len(raw))
        prog = _Fprog(len(raw) // 8, ctypes.cast(buf, ctypes.c_void_p))
        if libc.prctl(ctypes.c_int(22), ulong(2), ctypes.byref(prog), ulong(0), ulong(0)) != 0:
            _fail('installing the subprocess seccomp filter failed')


def _prepare(req):
    main = type(sys)('__main__')
    main.__dict__['__builtins__'] = __builtins__
    sys.modules['__main__'] = main
    sys.argv[:] = [req['filename']]
    for d in req['site_dirs']:
        import site
        site.addsitedir(d)
    if req['allowed'] is not None:
        _guard(req['allowed'])
    if req['seccomp']:
        _install_seccomp(req['seccomp'])
    return main


def _exec(code, filename, main):
    status = 0
    try:
        exec(compile(code, filename, 'exec', dont_inherit=True), main.__dict__)
    except SystemExit as e:
        status = e.code
    except BaseException as e:
        import linecache
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        # Drop the bootstrap's own frame: `python FILE` shows only the user's frames.
        tb = e.__traceback__
        tb = tb.tb_next if tb is not None else None
        e.__traceback__ = tb
        if sys.excepthook is sys.__excepthook__:
            # The C hook reads source lines from disk; `traceback` reads them from linecache,
            # where the code (never written to disk) is.
            import traceback
            traceback.print_exception(e)
        else:
            sys.excepthook(type(e), e, tb)
        status = 1
    _save_figures()
    return status


def _save_figures():
    # Plot capture: the figures the code left open are saved as PNG files in the workspace
    # (`figure-<n>.png`, or `figure-<n>-<k>.png` when that name is taken: nothing is
    # overwritten) and closed, so they are the run's (or the session call's) artifacts —
    # `image/png`, counted against the caps — and a session's next call does not save them
    # again. Nothing happens unless the code imported pyplot: matplotlib is never imported
    # here, and the code is never rewritten.
    plt = sys.modules.get('matplotlib.pyplot')
    if plt is None:
        return
    try:
        numbers = list(plt.get_fignums())
    except BaseException:
        return
    for n in numbers:
        try:
            name = '%s/figure-%d.png' % (_HOME, n)
            k = 1
            while _exists(name):
                k += 1
                name = '%s/figure-%d-%d.png' % (_HOME, n, k)
            plt.figure(n).savefig(name, format='png')
        except BaseException as e:
            try:
                print('apizr: figure %d was not saved: %s' % (n, e), file=sys.stderr)
            except BaseException:
                pass
        finally:
            try:
                plt.close(n)
            except BaseException:
                pass


def _exists(path):
    try:
        posix.lstat(path)
        return True
    except OSError:
        return False


def _run(req):
    raise SystemExit(_exec(req['code'], req['filename'], _prepare(req)))


def _status(status):
    # A call's status as `python FILE` reports it (`sys.exit(None)` is 0, `sys.exit('text')`
    # prints the text and is 1).
    if status is None:
        return 0
    if not isinstance(status, int):
        try:
            print(status, file=sys.stderr)
        except BaseException:
            pass
        return 1
    return status


def _flush():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:
            pass


def _serve_calls(req, channel, answer):
    # A session's calls, one per frame read from `channel` (`<32-byte id><code>`), each run in
    # the one `__main__` the session keeps; after each, `answer` gets `<id>:<status>\n` (local
    # sessions and docker sessions differ only in where that line goes).
    main = _prepare(req)
    while True:
        call = _frame(channel)
        ident, code = call[:32], call[32:].decode('utf-8', 'surrogateescape')
        status = _status(_exec(code, req['filename'], main))
        _flush()
        answer(ident + b':' + str(status).encode() + b'\n')


def _answer_on_stdout_and_stderr(line):
    posix.write(1, line)
    posix.write(2, line)


def _session(req):
    channel = posix.dup(0)
    _detach_stdin()
    _serve_calls(req, channel, _answer_on_stdout_and_stderr)


def _oom_kills():
    # The container's own memory cgroup (a private cgroup namespace): how many tasks the
    # kernel killed at the memory limit (v2 `memory.events`, v1 `memory.oom_control`).
    for path in ('/sys/fs/cgroup/memory.events', '/sys/fs/cgroup/memory/memory.oom_control'):
        try:
            fd = posix.open(path, posix.O_RDONLY)
        except OSError:
            continue
        try:
            text = posix.read(fd, 4096).decode()
        finally:
            posix.close(fd)
        for row in text.splitlines():
            name, _, value = row.partition(' ')
            if name == 'oom_kill' and value.strip().isdigit():
                return int(value)
    return 0


def _wait_or_orphaned(pid):
    # The child's wait status. Should stdin close first (the host died: the engine closes
    # the attach stream), every process of the container is killed and this one exits, so
    # the engine removes the container (AutoRemove) instead of letting the code run on.
    try:
        import select
        pidfd = posix.pidfd_open(pid)
    except (ImportError, AttributeError, OSError):
        return posix.waitpid(pid, 0)[1]
    poller = select.poll()
    poller.register(0, select.POLLIN | select.POLLHUP)
    poller.register(pidfd, select.POLLIN)
    while True:
        for fd, _ in poller.poll():
            if fd == pidfd:
                return posix.waitpid(pid, 0)[1]
            if not posix.read(0, 65536):
                try:
                    posix.kill(-1, 9)
                except OSError:
                    pass
                posix._exit(125)


def _dumpable(flag):
    # PR_SET_DUMPABLE. The code runs as PID 1's uid, and a dumpable PID 1 lets it read
    # /proc/1/mem, where the end marker will be, and forge the end of its own run. Set before
    # the fork: a /proc/1/mem opened while PID 1 is still dumpable stays readable.
    import ctypes
    ulong = ctypes.c_ulong
    if ctypes.CDLL(None, use_errno=True).prctl(
            ctypes.c_int(4), ulong(flag), ulong(0), ulong(0), ulong(0)) != 0:
        _fail('PR_SET_DUMPABLE failed')


def _hold(req):
    _dumpable(0)
    pid = posix.fork()
    if pid == 0:
        # The code's own process is an ordinary one again (its /proc/self is its own).
        _dumpable(1)
        _detach_stdin()
        _run(req)
    marker = _frame()
    wstatus = _wait_or_orphaned(pid)
    status = posix.waitstatus_to_exitcode(wstatus)
    signal = 0
    if status < 0:
        signal = -status
        status = 128 + signal
    try:
        posix.kill(-1, 9)
    except OSError:
        pass
    while True:
        try:
            posix.waitpid(-1, 0)
        except ChildProcessError:
            break
        except OSError:
            break
    # Whether the workspace holds anything (nothing to copy out otherwise).
    try:
        files = 1 if posix.listdir('.') else 0
    except OSError:
        files = 1
    line = marker + (':%d:%d:%d:%d\n' % (status, signal, files, _oom_kills())).encode()
    posix.write(1, line)
    posix.write(2, line)
    while posix.read(0, 65536):
        pass
    posix._exit(status & 255)


def _keep_env(names):
    # The engine and the image add variables (PATH, HOSTNAME, HOME…): keep only `names`.
    keep = {n.encode() for n in names}
    for k in list(posix.environ):
        if k not in keep:
            posix.unsetenv(k)
            del posix.environ[k]


_HOME = posix.getcwd()
_req = marshal.loads(_frame())
if _req['env_keep'] is not None:
    _keep_env(_req['env_keep'])
if _req['session'] and _req['hold']:
    _hold_session(_req)
elif _req['session']:
    _session(_req)
elif _req['hold']:
    _hold(_req)
else:
    _detach_stdin()
    _run(_req)
