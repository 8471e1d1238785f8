"""Processes for the sandbox's python3: `subprocess`, `os.system`,
`os.popen`, `os.exec*` and `os.access` over the runtime's
`ephemeral:sandbox/process` and `fs-meta` interfaces.

WASI cannot fork or exec. The sandbox's host can run another program (the
shell and its utilities, python3, node) on a component's request, with all
of its standard input given when it starts and each output stream
inherited, captured or discarded. `install()` replaces `subprocess.Popen`
with a class that keeps Popen's interface over that: a child with
`stdin=PIPE` starts when its input is complete (at `communicate`, when
`stdin` is closed, or when it is waited for), and a `PIPE` output is read
once the child has ended. Errors, exit codes and signals are Linux's
(`FileNotFoundError: [Errno 2] ...`, `returncode == -9` after `kill()`),
with Linux's errno numbers, not WASI's.
"""

import io
import os
import sys
import time
import weakref

from componentize_py_types import Err
from wit_world.imports import fs_meta, process

# Linux's errno numbers and texts (WASI's numbers differ).
ENOENT = (2, "No such file or directory")
ESRCH = (3, "No such process")
ENOEXEC = (8, "Exec format error")
ECHILD = (10, "No child processes")
EAGAIN = (11, "Resource temporarily unavailable")
EACCES = (13, "Permission denied")
ENOTDIR = (20, "Not a directory")

# Linux's numbers for the errno names (for messages printed as Linux's).
LINUX_ERRNO = {
    "EPERM": 1, "ENOENT": 2, "ESRCH": 3, "EINTR": 4, "EIO": 5, "ENXIO": 6, "E2BIG": 7,
    "ENOEXEC": 8, "EBADF": 9, "ECHILD": 10, "EAGAIN": 11, "ENOMEM": 12, "EACCES": 13,
    "EFAULT": 14, "EBUSY": 16, "EEXIST": 17, "EXDEV": 18, "ENODEV": 19, "ENOTDIR": 20,
    "EISDIR": 21, "EINVAL": 22, "ENFILE": 23, "EMFILE": 24, "ENOTTY": 25, "ETXTBSY": 26,
    "EFBIG": 27, "ENOSPC": 28, "ESPIPE": 29, "EROFS": 30, "EMLINK": 31, "EPIPE": 32,
    "EDOM": 33, "ERANGE": 34, "EDEADLK": 35, "ENAMETOOLONG": 36, "ENOLCK": 37,
    "ENOSYS": 38, "ENOTEMPTY": 39, "ELOOP": 40, "EOVERFLOW": 75, "EILSEQ": 84,
    "ENOTSUP": 95, "EDQUOT": 122,
}


def linux_errno(number):
    """The Linux number of a WASI errno value (unchanged when unknown)."""
    import errno

    name = errno.errorcode.get(number)
    return LINUX_ERRNO.get(name, number) if name else number


PIPE = -1
STDOUT = -2
DEVNULL = -3

DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"

_real_access = os.access
# Spawned children not yet waited for (pid -> Popen), for os.kill and the
# exit of the python3 program.
_live = {}
# Children with stdin=PIPE whose input is not complete yet.
_unstarted = weakref.WeakSet()


def _fsstr(value):
    if isinstance(value, (bytes, bytearray)):
        return os.fsdecode(bytes(value))
    return os.fspath(value) if not isinstance(value, str) else value


def _abspath(path, cwd=None):
    path = _fsstr(path)
    if not path.startswith("/"):
        path = os.path.join(cwd or os.getcwd(), path)
    return os.path.normpath(path)


def access(path, mode, *, dir_fd=None, effective_ids=False, follow_symlinks=True):
    """os.access as the sandbox's user, with its permission bits."""
    if dir_fd is not None or not follow_symlinks or isinstance(path, int):
        return _real_access(path, mode, dir_fd=dir_fd, effective_ids=effective_ids,
                            follow_symlinks=follow_symlinks)
    try:
        fs_meta.access(_abspath(path), int(mode) & 7)
    except Err:
        return False
    except (TypeError, ValueError):
        raise
    return True


def _stdin_rest():
    """What is left of this program's own standard input: a child that
    shares it reads it."""
    stream = sys.stdin
    if stream is None:
        return b""
    try:
        if stream.closed:
            return b""
        buf = getattr(stream, "buffer", stream)
        data = buf.read()
    except (OSError, ValueError):
        return b""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    return data or b""


def _read_fd(fd):
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)


def _fileno(target):
    if isinstance(target, int):
        return target
    return target.fileno()


def _exec_error(kind, name):
    number, text = kind
    cls = {2: FileNotFoundError, 13: PermissionError, 20: NotADirectoryError}.get(number, OSError)
    if name is None:
        return cls(number, text)
    return cls(number, text, name)


def _check_file(path, name):
    """What execve says about `path`: None when it runs, else the errno."""
    if not os.path.exists(path):
        return ENOENT
    if os.path.isdir(path) or not access(path, os.X_OK):
        return EACCES
    return None


def _is_script_without_interpreter(path):
    """A non-empty file without `#!` (nor a binary's magic): execve's
    ENOEXEC. (The sandbox's utilities and programs are empty placeholders
    in /usr/bin.)"""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:
        return False
    return bool(head) and not head.startswith(b"#!") and head not in (b"\x7fELF", b"\x00asm")


def resolve(name, env, cwd):
    """execvpe's search for `name`: its path, or the OSError Linux raises."""
    name = _fsstr(name)
    if not name:
        raise _exec_error(ENOENT, name)
    if "/" in name:
        candidates = [_abspath(name, cwd)]
    else:
        if env is None:
            env = os.environ
        path = env.get("PATH", None) if hasattr(env, "get") else None
        if path is None:
            path = os.defpath
        dirs = path.split(":")
        candidates = [_abspath(os.path.join(d, name), cwd) for d in dirs]
    saved = None
    for candidate in candidates:
        err = _check_file(candidate, name)
        if err is None:
            if _is_script_without_interpreter(candidate):
                err = ENOEXEC
            else:
                return candidate
        if err is not ENOENT and saved is None:
            saved = err
    raise _exec_error(saved or ENOENT, name)


def _argv_for(path, argv0, rest):
    """The argv the host runs: argv[0] as given when it names the program
    found, the program's path otherwise (`executable=`). A script runs
    by the path execve got, as Linux's kernel hands it to its interpreter
    (`$0` is the path found in PATH); the shell's utilities and the programs are the
    empty stubs of /usr/bin."""
    argv0 = _fsstr(argv0)
    try:
        script = os.path.getsize(path) > 0
    except OSError:
        script = False
    if os.path.basename(argv0) == os.path.basename(path) and ("/" in argv0 or not script):
        return [argv0] + rest
    return [path] + rest


def _env_list(env):
    if env is None:
        env = os.environ
    return [(_fsstr(k), _fsstr(v)) for k, v in env.items()]


def _command(argv, env, cwd, stdin, stdout, stderr, merge):
    return process.Command(
        program=argv[0], args=argv, env=env, cwd=cwd, stdin=stdin,
        stdout=stdout, stderr=stderr, stderr_to_stdout=merge, timeout_ms=None,
    )


def _host_refused(message):
    return BlockingIOError(EAGAIN[0], EAGAIN[1])


class _InputPipe(io.RawIOBase):
    """The write end of a child's stdin: collects until it is closed, and
    then the child starts with all of it."""

    def __init__(self, popen):
        super().__init__()
        self._popen = popen
        self._chunks = []

    def writable(self):
        return True

    def write(self, b):
        if self.closed:
            raise ValueError("write to closed file")
        data = bytes(b)
        self._chunks.append(data)
        return len(data)

    def take(self):
        data = b"".join(self._chunks)
        self._chunks = []
        return data

    def close(self):
        if not self.closed:
            super().close()
            self._popen._start()


class _OutputPipe(io.RawIOBase):
    """The read end of a captured stream: reading waits for the child to
    end, then reads what it wrote."""

    def __init__(self, popen, which):
        super().__init__()
        self._popen = popen
        self._which = which
        self._data = None
        self._pos = 0

    def readable(self):
        return True

    def readinto(self, b):
        if self._data is None:
            self._popen.wait()
            self._data = self._popen._captured(self._which)
        n = min(len(b), len(self._data) - self._pos)
        b[:n] = self._data[self._pos:self._pos + n]
        self._pos += n
        return n


class TimeoutExpired(Exception):
    pass  # replaced by subprocess.TimeoutExpired in install()


class Popen:
    """subprocess.Popen over the sandbox's process interface."""

    _child_created = False

    def __init__(self, args, bufsize=-1, executable=None, stdin=None, stdout=None,
                 stderr=None, preexec_fn=None, close_fds=True, shell=False, cwd=None,
                 env=None, universal_newlines=None, startupinfo=None, creationflags=0,
                 restore_signals=True, start_new_session=False, pass_fds=(), *,
                 user=None, group=None, extra_groups=None, encoding=None, errors=None,
                 text=None, umask=-1, pipesize=-1, process_group=None):
        import subprocess

        self.args = args
        self.stdin = self.stdout = self.stderr = None
        self.returncode = None
        self._pid = None
        self._finished = None
        self._signal = None
        self._started = False
        self._waited = False
        self._pending = None
        self._out_fd = self._err_fd = None
        self._communication_started = False
        if bufsize is None:
            bufsize = -1
        if not isinstance(bufsize, int):
            raise TypeError("bufsize must be an integer")
        if text is not None and universal_newlines is not None and bool(universal_newlines) != bool(text):
            raise subprocess.SubprocessError("Cannot disambiguate when both text "
                                             "and universal_newlines are supplied but "
                                             "different. Pass one or the other.")
        self.text_mode = bool(encoding or errors or text or universal_newlines)
        if self.text_mode and encoding is None:
            encoding = "utf-8"
        self.encoding = encoding
        self.errors = errors
        self.universal_newlines = universal_newlines
        self.pipesize = pipesize

        # argv, as _execute_child builds it.
        if isinstance(args, (str, bytes)):
            argv = [args]
        elif isinstance(args, os.PathLike):
            if shell:
                raise TypeError("path-like args is not allowed when shell is true")
            argv = [args]
        else:
            argv = list(args)
        if shell:
            sh = "/bin/sh"
            argv = [sh, "-c"] + argv
            if executable:
                argv[0] = executable
        argv = [_fsstr(a) for a in argv]
        if not argv:
            raise IndexError("list index out of range")
        program = _fsstr(executable) if executable is not None else argv[0]

        # The working folder, then the program, as the child would see them.
        if cwd is not None:
            where = _abspath(cwd)
            if not os.path.exists(where):
                raise _exec_error(ENOENT, _fsstr(cwd))
            if not os.path.isdir(where):
                raise _exec_error(ENOTDIR, _fsstr(cwd))
        else:
            where = os.getcwd()
        path = resolve(program, env, where)
        self._argv = _argv_for(path, program, argv[1:])
        self._env = _env_list(env)
        self._cwd = where

        # Standard streams.
        self._merge = False
        self._out_mode = self._mode(stdout, 1, "stdout")
        if stderr == STDOUT:
            self._merge = True
            self._err_mode = process.OutputMode.DISCARD
        else:
            self._err_mode = self._mode(stderr, 2, "stderr")
            if self._err_fd == 1 and self._out_mode == process.OutputMode.INHERIT:
                # stderr into our own stdout, where the child's stdout goes.
                self._merge = True
                self._err_fd = None
        if stdout == PIPE:
            raw = _OutputPipe(self, "stdout")
            self.stdout = io.BufferedReader(raw)
            if self.text_mode:
                self.stdout = io.TextIOWrapper(self.stdout, encoding=encoding, errors=errors)
        if stderr == PIPE:
            raw = _OutputPipe(self, "stderr")
            self.stderr = io.BufferedReader(raw)
            if self.text_mode:
                self.stderr = io.TextIOWrapper(self.stderr, encoding=encoding, errors=errors)

        if stdin == PIPE:
            self._pending = _InputPipe(self)
            self.stdin = io.BufferedWriter(self._pending)
            if self.text_mode:
                self.stdin = io.TextIOWrapper(self.stdin, encoding=encoding, errors=errors,
                                              write_through=True, line_buffering=(bufsize == 1))
            self._input = None
            _unstarted.add(self)
        else:
            if stdin is None:
                self._input = _stdin_rest()
            elif stdin == DEVNULL:
                self._input = b""
            else:
                self._input = _read_fd(_fileno(stdin))
            self._start()

    def _mode(self, target, own_fd, which):
        if target is None:
            return process.OutputMode.INHERIT
        if target == PIPE:
            return process.OutputMode.CAPTURE
        if target == DEVNULL:
            return process.OutputMode.DISCARD
        if target == STDOUT:
            raise ValueError("STDOUT can only be used for stderr")
        fd = _fileno(target)
        if fd == own_fd:
            return process.OutputMode.INHERIT
        if which == "stdout":
            self._out_fd = fd
        else:
            self._err_fd = fd
        return process.OutputMode.CAPTURE

    # -- the child's life --------------------------------------------------

    @property
    def pid(self):
        return self._pid

    def _start(self):
        if self._started:
            return
        self._started = True
        _unstarted.discard(self)
        data = self._input
        if self._pending is not None:
            data = self._pending.take()
        if self._signal is not None:
            # Killed before its input was complete: it never ran.
            self._finish(process.Finished(status=128 + self._signal, stdout=b"",
                                          stderr=b"", limit=None))
            return
        cmd = _command(self._argv, self._env, self._cwd, data or b"",
                       self._out_mode, self._err_mode, self._merge)
        try:
            self._pid = process.spawn(cmd)
        except Err as e:
            self._started = False
            raise _host_refused(e.value) from None
        self._child_created = True
        _live[self._pid] = self

    def _finish(self, finished):
        self._finished = finished
        self._waited = True
        if self._pid is not None:
            _live.pop(self._pid, None)
        status = finished.status
        if self._signal is not None and status == 128 + self._signal:
            self.returncode = -self._signal
        elif finished.limit == "memory":
            self.returncode = -9
        else:
            self.returncode = status
        for fd, data in ((self._out_fd, finished.stdout), (self._err_fd, finished.stderr)):
            if fd is not None and data:
                view = memoryview(data)
                while view:
                    n = os.write(fd, view)
                    view = view[n:]

    def _captured(self, which):
        if self._finished is None:
            return b""
        return self._finished.stdout if which == "stdout" else self._finished.stderr

    def _wait_ms(self, ms):
        """Waits at most `ms` (None: as long as it takes); whether it ended."""
        if self._waited:
            return True
        self._close_input()
        self._start()
        if self._waited:
            return True
        try:
            finished = process.wait(self._pid, ms)
        except Err as e:
            raise ChildProcessError(ECHILD[0], ECHILD[1]) from None
        if finished is None:
            return False
        self._finish(finished)
        return True

    def _close_input(self):
        if self.stdin is not None and not self.stdin.closed:
            try:
                self.stdin.close()
            except (OSError, ValueError):
                pass

    def poll(self):
        if self._waited:
            return self.returncode
        if not self._started:
            return None
        self._wait_ms(0)
        return self.returncode

    def wait(self, timeout=None):
        if timeout is None:
            self._wait_ms(None)
            return self.returncode
        if self._wait_ms(max(0, int(timeout * 1000 + 0.999))):
            return self.returncode
        raise TimeoutExpired(self.args, timeout)

    @staticmethod
    def _remaining_time(endtime):
        if endtime is None:
            return None
        return endtime - time.monotonic()

    def communicate(self, input=None, timeout=None):
        if self._communication_started and input:
            raise ValueError("Cannot send input after starting communication")
        endtime = None if timeout is None else time.monotonic() + timeout
        if not self._communication_started:
            self._communication_started = True
            if self.stdin is not None and not self.stdin.closed:
                if input:
                    try:
                        self.stdin.write(input)
                    except BrokenPipeError:
                        pass
                self._close_input()
        if endtime is None:
            self.wait()
        else:
            remaining = self._remaining_time(endtime)
            if not self._wait_ms(max(0, int(remaining * 1000 + 0.999))):
                raise TimeoutExpired(self.args, remaining)
        out = err = None
        if self.stdout is not None:
            out = self.stdout.read()
            self.stdout.close()
        if self.stderr is not None:
            err = self.stderr.read()
            self.stderr.close()
        return out, err

    def send_signal(self, sig):
        if self._waited:
            return
        sig = int(sig)
        if not self._started:
            if sig != 0:
                self._signal = sig
                self._start()
            return
        try:
            process.kill(self._pid, sig)
        except Err:
            return  # it has just ended
        if sig != 0:
            self._signal = sig

    def terminate(self):
        self.send_signal(15)

    def kill(self):
        self.send_signal(9)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, value, traceback):
        for stream in (self.stdout, self.stderr):
            if stream is not None:
                try:
                    stream.close()
                except (OSError, ValueError):
                    pass
        try:
            self._close_input()
        finally:
            if exc_type is KeyboardInterrupt:
                return
            self.wait()

    def __repr__(self):
        return "<Popen: returncode: {} args: {!r}>".format(self.returncode, self.args)[:80 + 30]

    def __class_getitem__(cls, item):
        import types

        return types.GenericAlias(cls, item)


# -- os ---------------------------------------------------------------------

def system(command):
    """os.system: /bin/sh -c COMMAND with this program's streams; the wait
    status (exit code << 8)."""
    command = _fsstr(command)
    cmd = _command(["sh", "-c", command], _env_list(None), os.getcwd(), _stdin_rest(),
                   process.OutputMode.INHERIT, process.OutputMode.INHERIT, False)
    try:
        finished = process.run(cmd)
    except Err:
        return -1
    if finished.limit == "memory":
        return 9
    return (finished.status & 0xFF) << 8


class _wrap_close:
    """os.popen's file: closing it waits for the command; None for
    success, else the wait status."""

    def __init__(self, stream, proc):
        self._stream = stream
        self._proc = proc

    def close(self):
        self._stream.close()
        returncode = self._proc.wait()
        if returncode == 0:
            return None
        return returncode << 8  # a wait status, as CPython's

    def __enter__(self):
        return self

    def __exit__(self, *args):
        self.close()

    def __getattr__(self, name):
        return getattr(self._stream, name)

    def __iter__(self):
        return iter(self._stream)


def popen(cmd, mode="r", buffering=-1):
    if not isinstance(cmd, str):
        raise TypeError("invalid cmd type (%s, expected string)" % type(cmd))
    if mode not in ("r", "w"):
        raise ValueError("invalid mode %r" % mode)
    if buffering == 0 or buffering is None:
        raise ValueError("popen() does not support unbuffered streams")
    import subprocess

    if mode == "r":
        proc = subprocess.Popen(cmd, shell=True, text=True, stdout=PIPE, bufsize=buffering)
        return _wrap_close(proc.stdout, proc)
    proc = subprocess.Popen(cmd, shell=True, text=True, stdin=PIPE, bufsize=buffering)
    return _wrap_close(proc.stdin, proc)


def _exec(path, args, env):
    """os.execv/execve: runs the program in this program's place, then
    exits with its status (as the replaced process would have)."""
    args = [_fsstr(a) for a in args]
    if not args:
        raise ValueError("execv() arg 2 must not be empty")
    if not args[0]:
        raise ValueError("execv() arg 2 first element cannot be empty")
    name = _fsstr(path)
    full = _abspath(name)
    err = _check_file(full, name)
    if err is not None:
        raise _exec_error(err, None)
    cmd = _command(_argv_for(full, args[0], args[1:]), _env_list(env), os.getcwd(),
                   _stdin_rest(), process.OutputMode.INHERIT, process.OutputMode.INHERIT, False)
    try:
        finished = process.run(cmd)
    except Err:
        raise BlockingIOError(EAGAIN[0], EAGAIN[1]) from None
    os._exit(finished.status & 0xFF)


def execv(path, args):
    _exec(path, args, None)


def execve(path, args, env):
    _exec(path, args, env)


def _no_fork(*args, **kwargs):
    raise BlockingIOError(EAGAIN[0], EAGAIN[1])


def _no_child(*args, **kwargs):
    raise ChildProcessError(ECHILD[0], ECHILD[1])


def kill(pid, sig):
    """os.kill for the children this program started."""
    child = _live.get(pid)
    if child is None:
        raise ProcessLookupError(ESRCH[0], ESRCH[1])
    child.send_signal(sig)


def _define_wait_macros():
    defs = {
        "WIFEXITED": lambda s: (s & 0x7F) == 0,
        "WEXITSTATUS": lambda s: (s >> 8) & 0xFF,
        "WIFSIGNALED": lambda s: (s & 0x7F) not in (0, 0x7F),
        "WTERMSIG": lambda s: s & 0x7F,
        "WIFSTOPPED": lambda s: (s & 0xFF) == 0x7F,
        "WSTOPSIG": lambda s: (s >> 8) & 0xFF,
        "WCOREDUMP": lambda s: bool(s & 0x80),
        "WIFCONTINUED": lambda s: s == 0xFFFF,
    }
    for name, fn in defs.items():
        if not hasattr(os, name):
            fn.__name__ = name
            setattr(os, name, fn)

    if not hasattr(os, "waitstatus_to_exitcode"):
        def waitstatus_to_exitcode(status):
            status = int(status)
            if (status & 0x7F) == 0:
                return (status >> 8) & 0xFF
            if (status & 0x7F) != 0x7F:
                return -(status & 0x7F)
            raise ValueError("invalid wait status: %d" % status)
        os.waitstatus_to_exitcode = waitstatus_to_exitcode
    for name, value in (("WNOHANG", 1), ("WUNTRACED", 2), ("WCONTINUED", 8),
                        ("P_WAIT", 0), ("P_NOWAIT", 1), ("P_NOWAITO", 1)):
        if not hasattr(os, name):
            setattr(os, name, value)


def finish_children():
    """At exit: children still waiting for their input get it (EOF), and
    those writing to this program's own streams are waited for, as their
    output still reaches the reader of a Linux pipe."""
    for child in list(_unstarted):
        try:
            child._start()
        except BaseException:  # noqa: BLE001
            pass
    for child in list(_live.values()):
        try:
            if child._out_mode == process.OutputMode.INHERIT or (
                    child._err_mode == process.OutputMode.INHERIT and not child._merge):
                child._wait_ms(None)
        except BaseException:  # noqa: BLE001
            pass


def install():
    """Puts all of it in place (at build time: it is in the snapshot)."""
    import subprocess
    import shutil  # noqa: F401 - uses os.access, patched below

    global TimeoutExpired
    TimeoutExpired = subprocess.TimeoutExpired
    Popen.__module__ = "subprocess"
    Popen.__qualname__ = "Popen"
    subprocess.Popen = Popen
    subprocess._can_fork_exec = True
    subprocess._USE_POSIX_SPAWN = False
    subprocess._USE_VFORK = False
    os.access = access
    os.system = system
    os.popen = popen
    os._wrap_close = _wrap_close
    os.execv = execv
    os.execve = execve
    os.kill = kill
    for name in ("fork", "forkpty", "vfork"):
        setattr(os, name, _no_fork)
    for name in ("wait", "waitpid", "wait3", "wait4", "waitid"):
        if not hasattr(os, name):
            setattr(os, name, _no_child)
    for name in ("posix_spawn", "posix_spawnp"):
        setattr(os, name, _no_fork)
    _define_wait_macros()
