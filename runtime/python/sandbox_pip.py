"""`pip` in the sandbox (`python3 -m pip`, and the shell's `pip`/`pip3`).

The sandbox has no network, so this pip installs only from wheel files the
caller brought (the request's `files`): `pip install ./pkg.whl`,
`pip install --no-index --find-links DIR NAME`, `pip install -r
requirements.txt` against such files. Pure-Python wheels (`*-none-any`) are
unpacked into the sandbox's site-packages (`site_dir()`), which both pythons
put on `sys.path`. What is bundled (numpy, pandas, matplotlib, ... in the
scientific python) is reported as already satisfied. Anything that would
need a download fails at once with one line saying so, never a retry.
"""

import os
import re
import sys
import zipfile

def site_dir():
    """Where `pip install` puts packages: under $HOME, as `pip install
    --user` on Debian (read when called: the snapshot's HOME is not the
    sandbox's)."""
    return os.path.join(os.environ.get("HOME") or "/tmp", ".local/lib/python3/site-packages")


SCIENTIFIC_ZIP = "/usr/local/lib/python315.zip"
NO_NETWORK = (
    "ERROR: the sandbox has no network, so pip cannot download %s. Bring the wheel files "
    "with the request's `files` and run `pip install ./NAME-VERSION-py3-none-any.whl` or "
    "`pip install --no-index --find-links DIR NAME`."
)
USAGE = """Usage:
  pip install [--no-index] [-f DIR] [-r FILE] [--no-deps] [-U] [-q] WHEEL|NAME ...
  pip list [--format columns|freeze|json]
  pip freeze
  pip show NAME
  pip uninstall [-y] NAME

The sandbox has no network: pip installs pure-Python wheels you bring.
"""


class PipError(Exception):
    pass


def canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def version_key(text):
    parts = []
    for piece in re.split(r"[.+-]", text):
        parts.append((0, int(piece), "") if piece.isdigit() else (1, 0, piece))
    return parts


def wheel_fields(path):
    """(name, version, tags) of a wheel file name, or None."""
    base = os.path.basename(path)
    if not base.endswith(".whl"):
        return None
    pieces = base[:-4].split("-")
    if len(pieces) < 5:
        return None
    return pieces[0], pieces[1], "-".join(pieces[-3:])


# ---- what is there ----

def bundled():
    """canonical name -> (name, version) of what ships with python3."""
    found = {}
    try:
        with zipfile.ZipFile(SCIENTIFIC_ZIP) as z:
            for entry in z.namelist():
                top = entry.split("/", 1)[0]
                if top.endswith(".dist-info") and "-" in top:
                    name, version = top[: -len(".dist-info")].rsplit("-", 1)
                    found[canonical(name)] = (name, version)
    except (OSError, zipfile.BadZipFile):
        pass
    return found


def installed():
    """canonical name -> (name, version, dist-info path) in site_dir()."""
    found = {}
    try:
        entries = os.listdir(site_dir())
    except OSError:
        return found
    for entry in entries:
        if entry.endswith(".dist-info") and "-" in entry:
            name, version = entry[: -len(".dist-info")].rsplit("-", 1)
            found[canonical(name)] = (name, version, os.path.join(site_dir(), entry))
    return found


# ---- requirements ----

REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*?)\s*$")


def parse_requirement(text):
    """(name, [(op, version)]) of `name[extra] >=1.0, <2`, markers dropped."""
    text = text.split(";", 1)[0].strip()
    m = REQ.match(text)
    if not m:
        raise PipError("ERROR: Invalid requirement: %r" % text)
    specs = []
    for piece in m.group(3).strip("()").split(","):
        piece = piece.strip()
        if not piece:
            continue
        op = re.match(r"(===|==|!=|~=|>=|<=|>|<)\s*(.+)", piece)
        if not op:
            raise PipError("ERROR: Invalid requirement: %r" % text)
        specs.append((op.group(1), op.group(2).strip()))
    return m.group(1), specs


def extras_of(requirement):
    """The extras asked for in `name[a, b] >=1`."""
    m = REQ.match(requirement.split(";", 1)[0])
    if not m or not m.group(2):
        return ()
    return tuple(e.strip() for e in m.group(2)[1:-1].split(",") if e.strip())


def satisfies(version, specs):
    v = version_key(version)
    for op, want in specs:
        if want.endswith(".*"):
            prefix = want[:-2]
            ok = version == prefix or version.startswith(prefix + ".")
            if (op == "==") != ok:
                return False
            continue
        w = version_key(want)
        ok = {
            "==": v == w, "===": version == want, "!=": v != w, ">=": v >= w,
            "<=": v <= w, ">": v > w, "<": v < w, "~=": v >= w and v[: max(len(w) - 1, 1)] == w[: max(len(w) - 1, 1)],
        }[op]
        if not ok:
            return False
    return True


def read_requirements(path, seen=None):
    seen = seen or set()
    if path in seen:
        return [], []
    seen.add(path)
    reqs, links = [], []
    try:
        with open(path) as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise PipError("ERROR: Could not open requirements file: [Errno %d] %s: %r"
                       % (e.errno or 2, e.strerror or "No such file or directory", path))
    for line in lines:
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("-r ", "--requirement ")):
            more, more_links = read_requirements(
                os.path.join(os.path.dirname(path), line.split(None, 1)[1]), seen)
            reqs += more
            links += more_links
        elif line.startswith(("-f ", "--find-links ")):
            links.append(os.path.join(os.path.dirname(path), line.split(None, 1)[1]))
        elif line.startswith("--no-index"):
            continue
        elif line.startswith("-"):
            continue
        else:
            reqs.append(line)
    return reqs, links


# ---- install ----

def wheels_in(dirs):
    found = []
    for d in dirs:
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        found += [os.path.join(d, n) for n in names if n.endswith(".whl")]
    return found


def find_wheel(name, specs, candidates):
    """The newest wheel of `name` meeting `specs`, a pure-Python one
    before any other (which `unpack` then refuses, saying why)."""
    best = None
    for path in candidates:
        fields = wheel_fields(path)
        if fields and canonical(fields[0]) == canonical(name) and satisfies(fields[1], specs):
            rank = (fields[2].endswith("-none-any"), version_key(fields[1]))
            if best is None or rank > best[0]:
                best = (rank, path)
    return best and best[1]


def metadata(z):
    for entry in z.namelist():
        parts = entry.split("/")
        if len(parts) == 2 and parts[0].endswith(".dist-info") and parts[1] == "METADATA":
            return z.read(entry).decode("utf-8", "replace"), parts[0]
    raise PipError("ERROR: %s is not a valid wheel: no .dist-info/METADATA" % z.filename)


def dependencies(meta, extras=()):
    """The Requires-Dist lines whose markers hold here, for `extras`."""
    deps = []
    for line in meta.splitlines():
        if not line.strip():
            break
        if line.startswith("Requires-Dist:"):
            value = line.split(":", 1)[1].strip()
            if marker_holds(marker_of(value), extras):
                deps.append(value.split(";", 1)[0].strip())
    return deps


# Environment markers (PEP 508): `colorama; sys_platform == "win32"` is
# not for this sandbox, `tomli; python_version < "3.11"` not for its
# pythons. Evaluated with the running interpreter's values.
MARKER_TOKEN = re.compile(
    r"\s*(?:(?P<str>'[^']*'|\"[^\"]*\")|(?P<op>===|==|!=|~=|>=|<=|<|>|\(|\))"
    r"|(?P<word>not\s+in\b|[A-Za-z_][A-Za-z0-9_.]*))")


def marker_env(extra=""):
    import platform
    impl = sys.implementation
    version = "%d.%d.%d" % impl.version[:3]
    return {
        "os_name": os.name, "sys_platform": sys.platform,
        "platform_machine": platform.machine(), "platform_system": platform.system(),
        "platform_release": platform.release(), "platform_version": platform.version(),
        "platform_python_implementation": platform.python_implementation(),
        "python_version": "%d.%d" % sys.version_info[:2],
        "python_full_version": platform.python_version(),
        "implementation_name": impl.name, "implementation_version": version,
        "extra": extra,
    }


def marker_of(requirement):
    return requirement.split(";", 1)[1].strip() if ";" in requirement else ""


def marker_holds(marker, extras=()):
    """Whether `marker` holds here for any of `extras` (none: no extra)."""
    if not marker:
        return True
    return any(evaluate_marker(marker, marker_env(canonical(e))) for e in (tuple(extras) or ("",)))


def evaluate_marker(marker, env):
    tokens, pos = [], 0
    while pos < len(marker):
        m = MARKER_TOKEN.match(marker, pos)
        if not m or m.end() == pos:
            if not marker[pos:].strip():
                break
            raise PipError("ERROR: Invalid marker: %r" % marker)
        kind = m.lastgroup
        text = m.group(kind)
        tokens.append((kind, re.sub(r"\s+", " ", text)))
        pos = m.end()
    tokens.append(("end", ""))
    at = [0]

    def peek():
        return tokens[at[0]]

    def take():
        at[0] += 1
        return tokens[at[0] - 1]

    def value():
        kind, text = take()
        if kind == "str":
            return text[1:-1]
        if kind == "word" and text in env:
            return env[text]
        raise PipError("ERROR: Invalid marker: %r" % marker)

    def atom():
        if peek() == ("op", "("):
            take()
            result = either()
            if take() != ("op", ")"):
                raise PipError("ERROR: Invalid marker: %r" % marker)
            return result
        left = value()
        kind, op = take()
        if not (kind == "op" and op not in "()" or kind == "word" and op in ("in", "not in")):
            raise PipError("ERROR: Invalid marker: %r" % marker)
        return compare(left, op, value())

    def both():
        result = atom()
        while peek() == ("word", "and"):
            take()
            result = atom() and result
        return result

    def either():
        result = both()
        while peek() == ("word", "or"):
            take()
            result = both() or result
        return result

    result = either()
    if peek()[0] != "end":
        raise PipError("ERROR: Invalid marker: %r" % marker)
    return result


def compare(left, op, right):
    if op == "in":
        return left in right
    if op == "not in":
        return left not in right
    if op == "===":
        return left == right
    if re.fullmatch(r"[0-9][0-9A-Za-z.+-]*", left) and re.fullmatch(r"[0-9][0-9A-Za-z.*+-]*", right):
        return satisfies(left, [(op, right)])
    if op == "==":
        return left == right
    if op == "!=":
        return left != right
    raise PipError("ERROR: Invalid marker: cannot compare %r %s %r" % (left, op, right))


def unpack(path, quiet):
    fields = wheel_fields(path)
    if fields is None:
        raise PipError("ERROR: %s is not a valid wheel filename." % os.path.basename(path))
    if not fields[2].endswith("-none-any"):
        raise PipError("ERROR: %s is built for %s; the sandbox runs pure-Python wheels "
                       "only (tag py3-none-any)." % (os.path.basename(path), fields[2]))
    try:
        z = zipfile.ZipFile(path)
    except (OSError, zipfile.BadZipFile) as e:
        raise PipError("ERROR: cannot read %s: %s" % (path, e))
    with z:
        meta, dist_info = metadata(z)
        name, version = dist_info[: -len(".dist-info")].rsplit("-", 1)
        old = installed().get(canonical(name))
        if old:
            remove(old)
        site = os.path.realpath(site_dir())
        os.makedirs(site, exist_ok=True)
        data = name + "-" + version + ".data/"
        for entry in z.infolist():
            target = entry.filename
            if target.startswith(data):
                rest = target[len(data):].split("/", 1)
                if len(rest) < 2 or rest[0] not in ("purelib", "platlib"):
                    continue
                target = rest[1]
            dest = os.path.realpath(os.path.join(site, target))
            if not dest.startswith(site + os.sep):
                raise PipError("ERROR: %s has a member outside site-packages: %r"
                               % (os.path.basename(path), entry.filename))
            if entry.is_dir():
                os.makedirs(dest, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "wb") as out:
                out.write(z.read(entry))
        with open(os.path.join(site, dist_info, "INSTALLER"), "w") as f:
            f.write("pip\n")
    return name, version, meta


def remove(entry):
    _, _, dist_info = entry
    record = os.path.join(dist_info, "RECORD")
    try:
        with open(record) as f:
            files = [line.split(",", 1)[0] for line in f if line.strip()]
    except OSError:
        files = []
    for rel in files:
        try:
            os.remove(os.path.join(site_dir(), rel))
        except OSError:
            pass
    for root, dirs, names in os.walk(dist_info, topdown=False):
        for n in names:
            try:
                os.remove(os.path.join(root, n))
            except OSError:
                pass
        try:
            os.rmdir(root)
        except OSError:
            pass


def install(args):
    links, reqs, files = [], [], []
    no_deps = quiet = False
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-f", "--find-links", "-r", "--requirement", "-i", "--index-url",
                 "--extra-index-url", "-t", "--target", "-c", "--constraint"):
            if i + 1 >= len(args):
                raise PipError("ERROR: %s option requires 1 argument" % a)
            value = args[i + 1]
            if a in ("-f", "--find-links"):
                links.append(value)
            elif a in ("-r", "--requirement"):
                more, more_links = read_requirements(value)
                reqs += more
                links += more_links
            elif a in ("-i", "--index-url", "--extra-index-url"):
                pass
            i += 2
            continue
        if a.startswith("--find-links="):
            links.append(a.split("=", 1)[1])
        elif a.startswith("--requirement="):
            more, more_links = read_requirements(a.split("=", 1)[1])
            reqs += more
            links += more_links
        elif a == "--no-deps":
            no_deps = True
        elif a in ("-q", "--quiet"):
            quiet = True
        elif a.startswith("-"):
            pass  # --no-index, --user, -U, --break-system-packages, ...: as pip
        elif a.endswith(".whl") or os.sep in a:
            files.append(a)
        else:
            reqs.append(a)
        i += 1
    if not reqs and not files:
        raise PipError("ERROR: You must give at least one requirement to install "
                       "(see \"pip help install\")")
    for f in files:
        if not os.path.isfile(f):
            raise PipError("ERROR: Could not install from %s: no such file" % f)
    candidates = wheels_in(links) + [os.path.abspath(f) for f in files if f.endswith(".whl")]
    have = bundled()
    done = {}
    todo = [("file", os.path.abspath(f)) for f in files] + [("req", r) for r in reqs]
    while todo:
        kind, what = todo.pop(0)
        if kind == "file":
            path = what
        else:
            marker = marker_of(what)
            if not marker_holds(marker):
                say(quiet, "Ignoring %s: markers '%s' don't match your environment"
                    % (what.split(";", 1)[0].strip(), marker))
                continue
            name, specs = parse_requirement(what)
            key = canonical(name)
            if key in done:
                continue
            mine = installed().get(key)
            ours = have.get(key)
            if ours and satisfies(ours[1], specs):
                say(quiet, "Requirement already satisfied: %s in %s (%s, bundled with python3)"
                    % (name, SCIENTIFIC_ZIP, ours[1]))
                done[key] = ours[1]
                continue
            path = find_wheel(name, specs, candidates)
            if path is None:
                if mine and satisfies(mine[1], specs):
                    say(quiet, "Requirement already satisfied: %s in %s (%s)" % (name, site_dir(), mine[1]))
                    done[key] = mine[1]
                    continue
                raise PipError(NO_NETWORK % what)
        say(quiet, "Processing %s" % path)
        name, version, meta = unpack(path, quiet)
        done[canonical(name)] = version
        if not no_deps:
            extras = extras_of(what) if kind == "req" else ()
            todo += [("req", d) for d in dependencies(meta, extras)]
        say(quiet, "Successfully installed %s-%s" % (name, version))


def say(quiet, line):
    if not quiet:
        print(line)


def listing(args):
    fmt = "columns"
    for i, a in enumerate(args):
        if a.startswith("--format="):
            fmt = a.split("=", 1)[1]
        elif a == "--format" and i + 1 < len(args):
            fmt = args[i + 1]
    rows = {k: v for k, v in bundled().items()}
    for key, (name, version, _) in installed().items():
        rows[key] = (name, version)
    items = sorted(rows.values(), key=lambda r: canonical(r[0]))
    if fmt == "freeze":
        for name, version in items:
            print("%s==%s" % (name, version))
    elif fmt == "json":
        import json

        print(json.dumps([{"name": n, "version": v} for n, v in items]))
    else:
        width = max([len("Package")] + [len(n) for n, _ in items])
        print("%s %s" % ("Package".ljust(width), "Version"))
        print("%s %s" % ("-" * width, "-" * max(7, max([len(v) for _, v in items] or [0]))))
        for name, version in items:
            print("%s %s" % (name.ljust(width), version))


def show(args):
    names = [a for a in args if not a.startswith("-")]
    if not names:
        raise PipError("ERROR: Please provide a package name or names.")
    have, mine = bundled(), installed()
    shown = False
    for n in names:
        key = canonical(n)
        if key in mine:
            print("Name: %s\nVersion: %s\nLocation: %s" % (mine[key][0], mine[key][1], site_dir()))
            shown = True
        elif key in have:
            print("Name: %s\nVersion: %s\nLocation: %s" % (have[key][0], have[key][1], SCIENTIFIC_ZIP))
            shown = True
        else:
            sys.stderr.write("WARNING: Package(s) not found: %s\n" % n)
    return 0 if shown else 1


def uninstall(args):
    names = [a for a in args if not a.startswith("-")]
    mine, have = installed(), bundled()
    for n in names:
        key = canonical(n)
        if key in mine:
            remove(mine[key])
            print("Successfully uninstalled %s-%s" % (mine[key][0], mine[key][1]))
        elif key in have:
            raise PipError("ERROR: Cannot uninstall %s: it is bundled with python3 (read-only)" % n)
        else:
            print("WARNING: Skipping %s as it is not installed." % n)


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0
    if args[0] in ("-V", "--version"):
        print("pip 25.0 (sandbox, offline) from %s (python %d.%d)" % ((__file__,) + sys.version_info[:2]))
        return 0
    command, rest = args[0], args[1:]
    try:
        if command == "install":
            install(rest)
        elif command == "list":
            listing(rest)
        elif command == "freeze":
            listing(["--format=freeze"])
        elif command == "show":
            return show(rest)
        elif command == "uninstall":
            uninstall(rest)
        elif command in ("download", "wheel", "search", "index"):
            raise PipError(NO_NETWORK % " ".join(rest) if rest else NO_NETWORK % "anything")
        else:
            raise PipError("ERROR: unknown command \"%s\"" % command)
    except PipError as e:
        sys.stderr.write("%s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
