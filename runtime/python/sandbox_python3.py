"""The `python3` command of an Ephemeral sandbox.

componentize-py builds this module into a `wasi:cli/command` component by
running it once at build time and snapshotting the initialised interpreter.
Only modules imported by then exist at run time (the component carries no
files), so importing this module first imports the whole pure-Python
standard library (see `preload`). At run time, `Run.run` is the component's
`wasi:cli/run` export: it reads argv, environment and working folder from
WASI, emulates CPython's command line (`python3 FILE`, `-c`, `-m`, `-`, the
usual flags) and exits with CPython's status.
"""

import sys
import os

from wit_world import exports
from wit_world.imports import environment, exit as wasi_exit

import sandbox_pip
import sandbox_processes

VERSION_LINE = "Python %d.%d.%d" % sys.version_info[:3]

# Top-level stdlib names not to pre-import: tests, GUIs, modules with side
# effects on import, and the interactive IDE.
SKIP_TOP = {
    "test", "idlelib", "tkinter", "turtle", "turtledemo", "this",
    "antigravity", "__phello__", "__hello__", "site-packages", "lib2to3",
    "ensurepip", "pydoc_data",
}
# Submodule name parts never pre-imported anywhere in the tree.
SKIP_PART = {"__main__", "test", "tests", "idle_test"}

# Build-time results, kept in the snapshot.
PRELOADED = []  # names that imported
FAILED = {}  # name -> reason it did not import
MAIN_SOURCES = {}  # module name -> (file name, source) of runnable modules


def _stdlib_dir():
    # Not os.__file__: `os` is frozen, and its __file__ names a folder that
    # is not there.
    import argparse

    return os.path.dirname(argparse.__file__)


def _stdlib_names(root):
    """Every module and package name found under the stdlib folder, sorted."""
    names = set()
    for dirpath, dirnames, filenames in os.walk(root):
        rel = os.path.relpath(dirpath, root)
        parts = [] if rel == "." else rel.split(os.sep)
        if parts and (parts[0] in SKIP_TOP or "-" in parts[0]):
            dirnames[:] = []
            continue
        if parts and not os.path.exists(os.path.join(dirpath, "__init__.py")):
            dirnames[:] = []
            continue
        if any(p in SKIP_PART for p in parts):
            dirnames[:] = []
            continue
        dirnames.sort()
        if parts:
            names.add(".".join(parts))
        for f in filenames:
            if not f.endswith(".py") or f == "__init__.py":
                continue
            stem = f[:-3]
            if not stem.isidentifier() or stem in SKIP_PART:
                continue
            if not parts and stem in SKIP_TOP:
                continue
            names.add(".".join(parts + [stem]))
    return sorted(names)


def _is_runnable(source):
    return "__name__ == '__main__'" in source or '__name__ == "__main__"' in source


def preload():
    """Imports the standard library (build time only)."""
    import importlib

    root = _stdlib_dir()
    names = sorted(set(sys.builtin_module_names) | set(_stdlib_names(root)))
    for name in names:
        try:
            importlib.import_module(name)
        except BaseException as e:  # noqa: BLE001 - SystemExit included
            FAILED[name] = "%s: %s" % (type(e).__name__, e)
            continue
        PRELOADED.append(name)
        mod = sys.modules.get(name)
        path = getattr(mod, "__file__", None) or ""
        if not path.endswith(".py"):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                source = f.read()
        except (OSError, UnicodeDecodeError):
            continue
        if _is_runnable(source):
            MAIN_SOURCES[name] = (path, source)
    # Modules imported along the way under other names (frozen ones such
    # as `collections.abc`) are in the snapshot too.
    seen = set(PRELOADED)
    for name, mod in list(sys.modules.items()):
        spec = getattr(mod, "__spec__", None)
        origin = getattr(spec, "origin", None) or ""
        if name not in seen and (origin in ("frozen", "built-in") or origin.startswith(root + "/")):
            PRELOADED.append(name)
    PRELOADED.sort()
    # `python3 -m pkg` runs pkg/__main__.py, which cannot be imported here
    # (it would run); keep its source instead.
    for name in list(PRELOADED):
        mod = sys.modules.get(name)
        for p in getattr(mod, "__path__", None) or []:
            main = os.path.join(p, "__main__.py")
            if os.path.exists(main):
                with open(main, encoding="utf-8") as f:
                    MAIN_SOURCES[name + ".__main__"] = (main, f.read())
    # `python3 -m pip` (and the shell's `pip`): the sandbox's offline pip.
    import sandbox_pip

    sys.modules["pip"] = sandbox_pip
    with open(sandbox_pip.__file__, encoding="utf-8") as f:
        MAIN_SOURCES["pip"] = ("/usr/lib/python3/dist-packages/pip/__main__.py", f.read())
    # The shell's `sqlite3` (`python3 -m sandbox_sqlite3`): Debian's
    # sqlite3 command line, on this python's sqlite3 module.
    import sandbox_sqlite3

    with open(sandbox_sqlite3.__file__, encoding="utf-8") as f:
        MAIN_SOURCES["sandbox_sqlite3"] = ("/usr/bin/sqlite3", f.read())
    # `this` prints on import: keep its source for `import this`.
    this = os.path.join(root, "this.py")
    if os.path.exists(this):
        with open(this, encoding="utf-8") as f:
            MAIN_SOURCES["this"] = (this, f.read())
    # Work some lazy caches out now rather than in every run.
    try:
        import sysconfig

        sysconfig.get_config_vars()
    except Exception:  # noqa: BLE001
        pass


def _explain_no_network():
    """Sockets exist but open nothing (the stub plugged in by build.sh).
    Fail the way Python fails on a Linux host without network, so agents
    read familiar errors: name lookups end in EAI_AGAIN, and sockets find
    no route."""
    import socket

    # Linux's numbers and glibc's wording, not WASI's.
    eai_again = (-3, "Temporary failure in name resolution")
    enetunreach = (101, "Network is unreachable")
    real_init = socket.socket.__init__
    real_getaddrinfo = socket.getaddrinfo

    def __init__(self, *args, **kwargs):
        try:
            real_init(self, *args, **kwargs)
        except PermissionError:
            raise OSError(*enetunreach) from None

    def getaddrinfo(host, *args, **kwargs):
        try:
            return real_getaddrinfo(host, *args, **kwargs)
        except socket.gaierror:
            raise socket.gaierror(*eai_again) from None

    socket.socket.__init__ = __init__
    socket.getaddrinfo = getaddrinfo
    _https_without_ssl()


def _https_without_ssl():
    """There is no `ssl` here, so urllib would answer `unknown url type:
    https`. An https handler whose connections fail first at the name
    lookup, as every connection here does, gives Linux's error instead
    (`<urlopen error [Errno -3] Temporary failure in name resolution>`)."""
    import http.client
    import urllib.request

    if hasattr(http.client, "HTTPSConnection"):
        return

    class HTTPSConnection(http.client.HTTPConnection):
        default_port = http.client.HTTPS_PORT

    class HTTPSHandler(urllib.request.AbstractHTTPHandler):
        def https_open(self, req):
            return self.do_open(HTTPSConnection, req)

        https_request = urllib.request.AbstractHTTPHandler.do_request_

    HTTPSConnection.__module__ = "http.client"
    HTTPSHandler.__module__ = "urllib.request"
    http.client.HTTPSConnection = HTTPSConnection
    urllib.request.HTTPSHandler = HTTPSHandler


class _SourceFinder:
    """Imports the modules whose source was kept at build time but that are
    not in the snapshot (`this`, `json.__main__`, ...)."""

    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name not in MAIN_SOURCES:
            return None
        import importlib.util

        filename, _ = MAIN_SOURCES[name]
        return importlib.util.spec_from_loader(name, cls, origin=filename)

    @classmethod
    def create_module(cls, spec):
        return None

    @classmethod
    def exec_module(cls, module):
        filename, source = MAIN_SOURCES[module.__name__]
        module.__file__ = filename
        exec(compile(source, filename, "exec", dont_inherit=True), module.__dict__)

    @classmethod
    def get_code(cls, name):
        filename, source = MAIN_SOURCES[name]
        return compile(source, filename, "exec", dont_inherit=True)

    @classmethod
    def get_source(cls, name):
        return MAIN_SOURCES[name][1]

    @classmethod
    def is_package(cls, name):
        return False


STDLIB_PATH = [p for p in sys.path if p.startswith("/python")]

# This module body runs once, at build time. build.sh stages this file in a
# folder with a `build-stage` marker, where the lists of what imported (and
# what did not) are left for it to ship.
preload()
sys.meta_path.append(_SourceFinder)
_explain_no_network()
# subprocess, os.system, os.popen, os.exec*, os.access: the sandbox's own.
sandbox_processes.install()
_stage = os.path.dirname(os.path.abspath(__file__))
if os.path.exists(os.path.join(_stage, "build-stage")):
    with open(os.path.join(_stage, "python3-modules.txt"), "w") as _f:
        _f.write("".join(n + "\n" for n in PRELOADED))
    with open(os.path.join(_stage, "python3-modules-failed.txt"), "w") as _f:
        _f.write("".join("%s\t%s\n" % kv for kv in sorted(FAILED.items())))
    with open(os.path.join(_stage, "python3-main-sources.txt"), "w") as _f:
        _f.write("".join(n + "\n" for n in sorted(MAIN_SOURCES)))
    # CPython's licence, from the standard library componentize-py bundles.
    for _lic in ("LICENSE.txt", "LICENSE"):
        _lic = os.path.join(_stdlib_dir(), _lic)
        if os.path.exists(_lic):
            with open(_lic, "rb") as _src, open(os.path.join(_stage, "python-LICENSE.txt"), "wb") as _dst:
                _dst.write(_src.read())
            break
del _stage

USAGE = """\
usage: python3 [option] ... [-c cmd | -m mod | file | -] [arg] ...
Options (and corresponding environment variables):
-B     : don't write .pyc files on import
-c cmd : program passed in as string (terminates option list)
-E     : ignore PYTHON* environment variables (such as PYTHONPATH)
-h     : print this help message and exit (also -? or --help)
-I     : isolate Python from the user's environment (implies -E, -P and -s)
-m mod : run library module as a script (terminates option list)
-O     : remove assert and __debug__-dependent statements
-OO    : do -O changes and also discard docstrings
-P     : don't prepend a potentially unsafe path to sys.path
-q     : don't print version and copyright messages on interactive startup
-s     : don't add user site directory to sys.path
-S     : don't imply 'import site' on initialization
-u     : force the stdout and stderr streams to be unbuffered
-V     : print the Python version number and exit (also --version)
-W arg : warning control
-X opt : set implementation-specific option (accepted, ignored)
file   : program read from script file
-      : program read from stdin (default; interactive mode is not available)
arg ...: arguments passed to program in sys.argv[1:]

This python3 runs inside the Ephemeral sandbox: the standard library is
built in, subprocess runs the sandbox's own programs (its shell and
utilities, python3, node), numpy, pandas, matplotlib and more are bundled (imported from python3-sci),
and pip installs only wheel files you bring: there is no network.
"""


class _Usage(Exception):
    """A command-line error: message for stderr, exit status 2."""


def _parse(argv):
    """CPython's option parsing. Returns (opts, mode, target, args)."""
    opts = {"u": False, "B": False, "E": False, "I": False, "P": False,
            "O": 0, "W": [], "V": 0, "h": False}
    i = 1
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            i += 1
            break
        if arg in ("--version",):
            opts["V"] += 1
            i += 1
            continue
        if arg == "--help":
            opts["h"] = True
            i += 1
            continue
        if arg == "-" or not arg.startswith("-"):
            break
        if arg.startswith("--"):
            raise _Usage("unknown option %s" % arg)
        j = 1
        while j < len(arg):
            ch = arg[j]
            if ch in "cmWX":
                value = arg[j + 1:]
                if not value:
                    i += 1
                    if i >= len(argv):
                        raise _Usage("Argument expected for the -%s option" % ch)
                    value = argv[i]
                if ch == "c":
                    return opts, "c", value, ["-c"] + argv[i + 1:]
                if ch == "m":
                    return opts, "m", value, [None] + argv[i + 1:]
                if ch == "W":
                    opts["W"].append(value)
                break
            if ch in "uBEIPV":
                opts[ch] = opts[ch] + 1 if ch == "V" else True
            elif ch == "O":
                opts["O"] += 1
            elif ch in "h?":
                opts["h"] = True
            elif ch in "bdiqsSRvx":
                pass  # accepted, no effect here
            else:
                raise _Usage("Unknown option: -%s" % ch)
            j += 1
        i += 1
    rest = argv[i:]
    if not rest or rest[0] == "-":
        return opts, "stdin", None, ([rest[0]] if rest else [""]) + rest[1:]
    return opts, "file", rest[0], rest


def _refresh_process_state(env, cwd):
    """The snapshot was taken at build time: bring the environment, working
    folder and random state up to this run."""
    for key in list(os.environ):
        del os.environ[key]
    for key, value in env:
        try:
            os.environ[key] = value
        except (ValueError, OSError):
            pass
    if cwd:
        try:
            os.chdir(cwd)
        except OSError:
            pass
    import random

    random.seed()
    import tempfile

    tempfile.tempdir = None
    # wasi-libc's _exit can only say success or failure.
    os._exit = _os_exit


def _os_exit(status):
    wasi_exit.exit_with_code(int(status) & 0xFF)


def _fresh_main(filename=None, loader=None):
    import builtins
    import types

    main = types.ModuleType("__main__")
    main.__dict__.update(
        __builtins__=builtins, __spec__=None, __package__=None, __cached__=None
    )
    if filename is not None:
        main.__file__ = filename
    if loader is not None:
        main.__loader__ = loader
    sys.modules["__main__"] = main
    return main


def _print_exception(exc):
    """What CPython prints for an uncaught exception, without our frames."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_globals is globals():
        tb = tb.tb_next
    # The default hook prints exc.__traceback__, not its tb argument.
    exc.__traceback__ = tb
    try:
        sys.excepthook(type(exc), exc, tb)
    except BaseException:  # noqa: BLE001
        import traceback

        traceback.print_exception(type(exc), exc, tb)


def _exit_status(code):
    """CPython's handling of SystemExit's code."""
    if code is None:
        return 0
    if isinstance(code, bool) or isinstance(code, int):
        return int(code) & 0xFF
    try:
        print(code, file=sys.stderr)
    except BaseException:  # noqa: BLE001
        pass
    return 1


def _run_code(source, filename, main, optimize):
    code = compile(source, filename, "exec", dont_inherit=True, optimize=optimize)
    exec(code, main.__dict__)


def _run_module(name, optimize):
    """`-m NAME`: the module's code as `__main__`, like runpy."""
    import importlib.util

    target = name
    spec = None
    loaded = sys.modules.get(name)
    if loaded is not None and getattr(loaded, "__path__", None) is not None:
        # A pre-imported package runs its __main__ (whose source was kept),
        # never its __init__ (which may mention `__main__` in a docstring).
        target = name + ".__main__"
        if target not in MAIN_SOURCES:
            raise _NoModule("No module named %s; '%s' is a package and cannot "
                            "be directly executed" % (target, name))
    elif target in MAIN_SOURCES and target in sys.modules:
        pass
    else:
        try:
            spec = importlib.util.find_spec(target)
        except (ImportError, ValueError) as e:
            raise _NoModule("Error while finding module specification for %r (%s: %s)"
                            % (name, type(e).__name__, e))
        if spec is None and target not in MAIN_SOURCES:
            raise _NoModule("No module named %s" % name)
        if spec is not None and spec.submodule_search_locations is not None:
            target = name + ".__main__"
            if target not in MAIN_SOURCES:
                try:
                    spec = importlib.util.find_spec(target)
                except ImportError:
                    spec = None
                if spec is None:
                    raise _NoModule("No module named %s; '%s' is a package and cannot "
                                    "be directly executed" % (target, name))
    if target in MAIN_SOURCES:
        filename, source = MAIN_SOURCES[target]
        pkg = target.rpartition(".")[0]
        sys.argv[0] = filename
        main = _fresh_main(filename, _SourceFinder)
        main.__package__ = pkg
        main.__spec__ = importlib.util.spec_from_loader(target, _SourceFinder, origin=filename)
        _run_code(source, filename, main, optimize)
        return
    if spec is not None and spec.origin and os.path.exists(spec.origin):
        # A module of the sandbox's own files: let runpy do it.
        import runpy

        sys.argv[0] = spec.origin
        runpy._run_module_as_main(target, alter_argv=False)
        return
    if target in sys.modules:
        raise _NoModule("No code object available for %s (it is built into this "
                        "python3 and cannot be run as a script)" % name)
    raise _NoModule("No module named %s" % name)


class _NoModule(Exception):
    pass


# The scientific python (`python3-sci`: CPython 3.15 with numpy, pandas,
# matplotlib and the rest compiled in) is a second, much larger program.
# This one starts in milliseconds and has the process interface; that one
# pays a second for its first scientific import. So a command line whose
# code imports one of these (found by reading it, and the local modules it
# imports, before any of it runs) is handed whole to `python3-sci`, with the
# same argv, environment, folder and standard input, and its status is ours.
SCIENTIFIC = frozenset("""
    numpy pandas matplotlib mpl_toolkits scipy sklearn seaborn statsmodels PIL
    lxml sympy mpmath openpyxl xlrd xlsxwriter bs4 html5lib yaml regex networkx
    patsy dateutil jinja2 markupsafe reportlab pypdf tabulate tqdm joblib
    cloudpickle attr attrs charset_normalizer contourpy cycler fontTools
    kiwisolver pyparsing packaging narwhals formulaic more_itertools toolz tlz
    wrapt six defusedxml et_xmlfile soupsieve webencodings threadpoolctl
    typing_extensions tomli_w xmltodict interface_meta
""".split())
SCIENTIFIC_PROGRAM = "python3-sci"
# How many local modules the scan reads at most.
SCAN_LIMIT = 64


def _imported_names(source):
    """The top-level names `source` imports (statements anywhere, and
    `__import__`/`import_module` of a literal), or None if it does not parse."""
    import ast

    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            called = getattr(func, "id", None) or getattr(func, "attr", None)
            arg = node.args[0]
            if called in ("__import__", "import_module") and isinstance(arg, ast.Constant) \
                    and isinstance(arg.value, str):
                names.add(arg.value.split(".")[0])
    return names


def _local_module(name, dirs):
    for d in dirs:
        for candidate in (os.path.join(d, name + ".py"), os.path.join(d, name, "__init__.py")):
            if os.path.isfile(candidate):
                return candidate
    return None


def _wants_scientific(source, dirs):
    """Whether `source`, or a module of `dirs` it imports, imports a
    scientific package that this python does not have."""
    if not _scientific_available():
        return False
    todo, seen = [source], set()
    while todo and len(seen) <= SCAN_LIMIT:
        names = _imported_names(todo.pop())
        if names is None:
            continue
        for name in names:
            local = _local_module(name, dirs)
            if local is None:
                if name in SCIENTIFIC:
                    return True
                continue
            if local not in seen:
                seen.add(local)
                try:
                    with open(local, "rb") as f:
                        todo.append(f.read())
                except OSError:
                    pass
    return False


# python3-sci's sys.path is its snapshot's (the zip only): it takes neither
# PYTHONPATH nor the script's folder. So it runs this instead of the command
# line itself: put the folders this python would search in front, then run
# the file, module or code as `__main__`, its own frames left out of a
# traceback. Its WASI build has no name resolution at all (`socket.
# getaddrinfo` was an AttributeError): once `socket` is imported, names fail
# and connections are unreachable as on a machine with no network.
# WASI has no users, so neither python has os.getuid, pwd or grp. The
# sandbox has one user (uid and gid 1000, `worker`, as `id` and its
# /etc/passwd say): scripts and tools that ask (pytest's tmp_path,
# getpass, expanduser, `os.getuid() == 0` checks) get that answer. Run in
# the small python at build time and in the scientific one at start.
IDENTITY_CODE = '''
def _identity():
    import collections, os, sys, types
    uid, mask = 1000, [0o022]
    def umask(new):
        old, mask[0] = mask[0], new & 0o777
        return old
    calls = {"getuid": lambda: uid, "geteuid": lambda: uid, "getgid": lambda: uid,
             "getegid": lambda: uid, "getgroups": lambda: [uid], "getppid": lambda: 1,
             "getlogin": lambda: os.environ.get("USER") or "worker",
             "getpgrp": os.getpid, "umask": umask}
    for name, call in calls.items():
        if not hasattr(os, name):
            setattr(os, name, call)
    def table(path, width):
        try:
            with open(path, encoding="utf-8") as f:
                rows = [line.rstrip("\\n").split(":") for line in f]
        except OSError:
            rows = []
        return [r for r in rows if len(r) == width]
    def module(name, kind, fields, path, convert, by_id, by_name, err_id, err_name):
        entry = collections.namedtuple(kind, fields)
        def all_():
            return [entry(*convert(r)) for r in table(path, len(fields))]
        def get_id(n):
            for e in all_():
                if e[2] == n:
                    return e
            raise KeyError(err_id % n)
        def get_name(n):
            for e in all_():
                if e[0] == n:
                    return e
            raise KeyError(err_name % (n,))
        m = types.ModuleType(name)
        setattr(m, kind, entry)
        setattr(m, by_id, get_id)
        setattr(m, by_name, get_name)
        setattr(m, name[:2] == "pw" and "getpwall" or "getgrall", all_)
        sys.modules.setdefault(name, m)
    for name in ("pwd", "grp"):
        try:
            __import__(name)
        except ImportError:
            pass
        else:
            return
    module("pwd", "struct_passwd",
           ["pw_name", "pw_passwd", "pw_uid", "pw_gid", "pw_gecos", "pw_dir", "pw_shell"],
           "/etc/passwd", lambda r: [r[0], r[1], int(r[2]), int(r[3])] + r[4:],
           "getpwuid", "getpwnam", "getpwuid(): uid not found: %d",
           "getpwnam(): name not found: %r")
    module("grp", "struct_group", ["gr_name", "gr_passwd", "gr_gid", "gr_mem"],
           "/etc/group", lambda r: [r[0], r[1], int(r[2]), [m for m in r[3].split(",") if m]],
           "getgrgid", "getgrnam", "getgrgid(): gid not found: %d",
           "getgrnam(): name not found: %r")
'''
_ns = {}
exec(IDENTITY_CODE, _ns)
_ns["_identity"]()
del _ns


HAND_OFF_BOOTSTRAP = """
import sys, json
_spec = json.loads(sys.argv[1])
sys.argv = _spec["argv"]
sys.path[:0] = _spec["path"]
sys.path.append(_spec["site"])
def _reseed():
    # The build imported numpy, pandas and matplotlib before snapshotting:
    # what they seeded then would be the same in every sandbox.
    m = sys.modules
    if "random" in m:
        m["random"].seed()
    if "numpy.random" in m:
        m["numpy.random"].seed()
    if "tempfile" in m:
        m["tempfile"]._name_sequence = None
_reseed()
class _SocketHook:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if name != "socket":
            return None
        import sys, importlib.util
        sys.meta_path.remove(cls)
        spec = importlib.util.find_spec(name)
        real, patch = (spec.loader if spec else None), cls.no_network
        if real is None:
            return spec
        class Loader:
            create_module = staticmethod(real.create_module)
            @staticmethod
            def exec_module(module):
                real.exec_module(module)
                patch(module)
        spec.loader = Loader
        return spec
    @staticmethod
    def no_network(socket):
        import _socket
        if hasattr(_socket, "getaddrinfo"):
            return
        def no_names(*args, **kwargs):
            raise socket.gaierror(-3, "Temporary failure in name resolution")
        for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "gethostbyaddr",
                     "getnameinfo"):
            setattr(_socket, name, no_names)
            setattr(socket, name, no_names)
        def unreachable(self, address):
            raise OSError(101, "Network is unreachable")
        socket.socket.connect = unreachable
        socket.socket.connect_ex = lambda self, address: 101
# A pre-imported interpreter (the scientific one) may have socket loaded
# already: patch it in place; otherwise patch it when it is first imported.
if "socket" in sys.modules:
    _SocketHook.no_network(sys.modules["socket"])
else:
    sys.meta_path.insert(0, _SocketHook)
def _run(spec):
    # Scripts, modules and code all run in __main__ itself, as python3
    # runs them: so its namespace is what _finish clears, and a file left
    # open at the top level is flushed in order as at a real exit.
    import __main__, linecache, os, runpy
    g = __main__.__dict__
    for k in ("json", "_spec", "_run", "_SocketHook", "_reseed", "_exit_status", "_finish",
              "_main", "_identity"):
        g.pop(k, None)
    mode, target = spec["mode"], spec["target"]
    if mode == "m":
        runpy._run_module_as_main(target, alter_argv=True)
        return
    if mode == "file":
        with open(target, "rb") as f:
            code = f.read()
        if code.startswith(b"PK\\x03\\x04"):
            runpy.run_path(target, run_name="__main__")
            return
        import importlib.machinery
        name = os.path.abspath(target)
        g.update(__file__=name, __cached__=None,
                 __loader__=importlib.machinery.SourceFileLoader("__main__", name))
    else:
        name = "<string>" if mode == "c" else "<stdin>"
        code = target
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    exec(compile(code, name, "exec"), g)
def _exit_status(code):
    import sys
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(str(code) + "\\n")
    except Exception:
        pass
    return 1
def _finish(status):
    # What the interpreter's finalization does that a program can see
    # (atexit, unclosed files flushed, stdio flushed), without tearing
    # down the ~770 modules the snapshot holds: that alone took 0.4 s.
    import atexit, gc, os, sys, __main__
    atexit._run_exitfuncs()
    __main__.__dict__.clear()
    gc.collect()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            status = status or 120
    os._exit(status)
def _main(spec, run=_run, exit_status=_exit_status, finish=_finish,
          ours=(sys._getframe().f_code, _run.__code__)):
    # Everything it calls is bound here: -c code runs in these globals and
    # the bootstrap's names are taken out of its sight.
    try:
        run(spec)
        status = 0
    except SystemExit as e:
        status = exit_status(e.code)
    except BaseException as e:
        import sys, traceback
        tb = e.__traceback__
        while tb is not None and tb.tb_next is not None and (
                tb.tb_frame.f_code in ours + (sys._getframe().f_code,)
                or tb.tb_frame.f_code.co_filename == "<frozen runpy>"):
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb)
        status = 1
    finish(status)
_main(_spec)
"""
HAND_OFF_BOOTSTRAP = IDENTITY_CODE + "_identity()\n" + HAND_OFF_BOOTSTRAP


def _hand_off(argv, mode, target, path, stdin):
    """Runs the command line in the scientific python; its status."""
    import json

    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    if isinstance(target, bytes):
        target = target.decode("utf-8", "surrogateescape")
    spec = json.dumps({
        "argv": list(sys.argv), "mode": mode, "target": target,
        "path": [d or os.getcwd() for d in path], "site": sandbox_pip.site_dir(),
    })
    process = sandbox_processes.process
    inherit = process.OutputMode.INHERIT
    cmd = process.Command(
        program=SCIENTIFIC_PROGRAM,
        args=[argv[0] if argv else "python3", "-c", HAND_OFF_BOOTSTRAP, spec],
        env=sandbox_processes._env_list(None), cwd=os.getcwd(), stdin=stdin, stdout=inherit,
        stderr=inherit, stderr_to_stdout=False, timeout_ms=None,
    )
    try:
        finished = process.run(cmd)
    except sandbox_processes.Err as e:
        sys.stderr.write("python3: cannot start %s: %s\n" % (SCIENTIFIC_PROGRAM, e.value))
        return 126
    return finished.status & 0xFF


def _scientific_available():
    return os.path.exists("/usr/bin/" + SCIENTIFIC_PROGRAM)


def _called_as_scientific(argv):
    """Whether the shell ran this as `python3-sci` (see the shell's
    `programs/external.rs`): then every command line goes to it."""
    return bool(argv) and os.path.basename(argv[0]) == SCIENTIFIC_PROGRAM


def _run_scientific_as_is(argv):
    """python3-sci with this very command line (its -h, -V and usage
    errors are its own); its status."""
    cmd = sandbox_processes.process.Command(
        program=SCIENTIFIC_PROGRAM, args=list(argv), env=sandbox_processes._env_list(None),
        cwd=os.getcwd(), stdin=sandbox_processes._stdin_rest(),
        stdout=sandbox_processes.process.OutputMode.INHERIT,
        stderr=sandbox_processes.process.OutputMode.INHERIT, stderr_to_stdout=False,
        timeout_ms=None,
    )
    try:
        return sandbox_processes.process.run(cmd).status & 0xFF
    except sandbox_processes.Err as e:
        sys.stderr.write("%s: %s\n" % (SCIENTIFIC_PROGRAM, e.value))
        return 127


def _main(argv, env, cwd):
    """Runs the command line; returns the exit status."""
    forced = _called_as_scientific(argv)
    if forced and not _scientific_available():
        sys.stderr.write("%s: command not found\n" % SCIENTIFIC_PROGRAM)
        return 127
    try:
        opts, mode, target, args = _parse(argv)
    except _Usage as e:
        if forced:
            return _run_scientific_as_is(argv)
        sys.stderr.write("%s\nusage: python3 [option] ... [-c cmd | -m mod | file | -] [arg] ...\n"
                         "Try `python -h' for more information.\n" % e)
        return 2
    if forced and (opts["h"] or opts["V"]):
        return _run_scientific_as_is(argv)
    if opts["h"]:
        sys.stdout.write(USAGE)
        return 0
    if opts["V"]:
        line = VERSION_LINE if opts["V"] == 1 else "Python " + sys.version
        sys.stdout.write(line + "\n")
        return 0

    isolated = opts["I"]
    ignore_env = opts["E"] or isolated
    env_map = dict(env)
    if opts["u"] or (not ignore_env and env_map.get("PYTHONUNBUFFERED")):
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.reconfigure(write_through=True)
            except (AttributeError, ValueError):
                pass
    if opts["B"] or (not ignore_env and env_map.get("PYTHONDONTWRITEBYTECODE")):
        sys.dont_write_bytecode = True
    optimize = opts["O"]
    if not ignore_env and not optimize and env_map.get("PYTHONOPTIMIZE", "").isdigit():
        optimize = int(env_map["PYTHONOPTIMIZE"])
    optimize = optimize if optimize else -1
    if opts["W"] or (not ignore_env and env_map.get("PYTHONWARNINGS")):
        import warnings

        ws = ([w for w in env_map.get("PYTHONWARNINGS", "").split(",") if w]
              if not ignore_env else []) + opts["W"]
        sys.warnoptions[:] = ws
        warnings._processoptions(ws)

    sys.argv = list(args)
    sys.orig_argv = list(argv)
    sys.executable = "/usr/bin/python3"

    # sys.path: the script's folder (or '' / cwd), PYTHONPATH, the stdlib.
    path = []
    if mode == "file":
        first = os.path.dirname(os.path.abspath(target))
    elif mode == "m":
        first = os.getcwd()
    else:
        first = ""
    if not (isolated or opts["P"] or (not ignore_env and env_map.get("PYTHONSAFEPATH"))):
        path.append(first)
    if not ignore_env and env_map.get("PYTHONPATH"):
        path.extend(p for p in env_map["PYTHONPATH"].split(os.pathsep) if p)
    # The site-packages `pip install` fills (see sandbox_pip), last as a
    # user site is.
    sys.path[:] = path + [p for p in STDLIB_PATH if p not in path] + [sandbox_pip.site_dir()]
    sys.path_importer_cache.clear()

    try:
        if mode == "file":
            filename = os.path.abspath(target)
            if os.path.isdir(target):
                sys.stderr.write("/usr/bin/python3: can't find '__main__' module in %r\n" % target)
                return 1
            try:
                with open(target, "rb") as f:
                    source = f.read()
            except OSError as e:
                # CPython names itself as it was called here (argv[0]).
                sys.stderr.write("%s: can't open file %r: [Errno %d] %s\n"
                                 % (argv[0] if argv and argv[0] else "python3", filename,
                                    sandbox_processes.linux_errno(e.errno or 0), e.strerror or e))
                return 2
            if forced or _wants_scientific(source, [d or os.getcwd() for d in path]):
                return _hand_off(argv, mode, target, path, sandbox_processes._stdin_rest())
            import importlib.machinery

            main = _fresh_main(filename, importlib.machinery.SourceFileLoader("__main__", filename))
            _run_code(source, filename, main, optimize)
        elif mode == "c":
            if forced or _wants_scientific(target, [d or os.getcwd() for d in path]):
                return _hand_off(argv, mode, target, path, sandbox_processes._stdin_rest())
            import linecache

            linecache.cache["<string>"] = (len(target), None, target.splitlines(True), "<string>")
            main = _fresh_main()
            _run_code(target, "<string>", main, optimize)
        elif mode == "m":
            if forced or _scientific_available() and target.split(".")[0] in SCIENTIFIC \
                    and _local_module(target.split(".")[0], [d or os.getcwd() for d in path]) is None:
                return _hand_off(argv, mode, target, path, sandbox_processes._stdin_rest())
            try:
                _run_module(target, optimize)
            except _NoModule as e:
                sys.stderr.write("/usr/bin/python3: %s\n" % e)
                return 1
        else:
            source = sys.stdin.buffer.read()
            if forced or _wants_scientific(source, [d or os.getcwd() for d in path]):
                return _hand_off(argv, mode, source, path, b"")
            import linecache

            text = source.decode("utf-8", "replace")
            linecache.cache["<stdin>"] = (len(text), None, text.splitlines(True), "<stdin>")
            main = _fresh_main()
            _run_code(source, "<stdin>", main, optimize)
    except SystemExit as e:
        return _exit_status(e.code)
    except BaseException as e:  # noqa: BLE001
        _print_exception(e)
        return 1
    return 0


def _finish(status):
    """atexit handlers, then flush the standard streams (as Py_Finalize)."""
    try:
        import atexit

        atexit._run_exitfuncs()
    except SystemExit as e:
        status = _exit_status(e.code)
    except BaseException:  # noqa: BLE001
        pass
    sandbox_processes.finish_children()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            # A stream the program closed (`with sys.stdout:`) is skipped.
            if stream is not None and not stream.closed:
                stream.flush()
        except BaseException:  # noqa: BLE001
            if stream in (sys.stdout, sys.__stdout__) and status == 0:
                status = 120
    return status


class Run(exports.Run):
    def run(self) -> None:
        argv = list(environment.get_arguments()) or ["python3"]
        env = list(environment.get_environment())
        cwd = dict(env).get("PWD") or environment.initial_cwd()
        _refresh_process_state(env, cwd)
        status = _finish(_main(argv, env, cwd))
        if status != 0:
            wasi_exit.exit_with_code(status & 0xFF)
