#!/usr/bin/env python3
"""Lays out the upstream test subsets of suites.txt for the sandbox.

    fetch.py OUT_DIR

Downloads each pinned sdist and wheel from PyPI once (kept in
OUT_DIR/downloads, every file checked against its sha256 on every run),
then writes, per package, OUT_DIR/NAME/ with the chosen test files and
support files at their paths inside the package (`lib/matplotlib/x` is
laid as `matplotlib/x`), and OUT_DIR/wheels/ with the wheels. A run with
unchanged inputs does nothing (OUT_DIR/stamp). Standard library only: it
runs before anything else is built.
"""
import hashlib
import html.parser
import os
import shutil
import sys
import tarfile
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
INDEX = os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple").rstrip("/")


def read_suites(path):
    sdists, wheels, files = {}, {}, []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            kind = words[0]
            if kind == "sdist" and len(words) == 4:
                sdists[words[1]] = (words[2], words[3])
            elif kind == "wheel" and len(words) == 3:
                wheels[words[1]] = words[2]
            elif kind in ("test", "support") and len(words) == 3:
                files.append((kind, words[1], words[2]))
            elif kind == "floor" and len(words) == 3:
                pass  # read by the test
            else:
                sys.exit("fetch.py: %s:%d: cannot read %r" % (path, number, line.strip()))
    return sdists, wheels, files


class _Links(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.links, self._href = {}, None

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self._href = dict(attrs).get("href")

    def handle_data(self, data):
        if self._href:
            self.links[data.strip()] = self._href
            self._href = None


def project_of(filename):
    return filename.split("-")[0].lower().replace("_", "-")


def download(filename, sha256, into):
    """`filename` from the index, checked against `sha256`; its path."""
    path = os.path.join(into, filename)
    if os.path.exists(path) and sha_of(path) == sha256:
        return path
    page = urllib.request.urlopen("%s/%s/" % (INDEX, project_of(filename)), timeout=120)
    links = _Links()
    links.feed(page.read().decode("utf-8", "replace"))
    href = links.links.get(filename)
    if href is None:
        sys.exit("fetch.py: %s is not on %s" % (filename, INDEX))
    url = urllib.parse.urljoin(page.geturl(), href)
    print("fetch.py: downloading %s" % filename, file=sys.stderr)
    part = path + ".part"
    with urllib.request.urlopen(url, timeout=600) as r, open(part, "wb") as out:
        shutil.copyfileobj(r, out)
    if sha_of(part) != sha256:
        os.remove(part)
        sys.exit("fetch.py: %s does not match its pinned sha256 %s" % (filename, sha256))
    os.replace(part, path)
    return path


def sha_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def laid_path(path):
    """Where a file of the sdist goes: matplotlib keeps its package in lib/."""
    return path[len("lib/"):] if path.startswith("lib/") else path


def extract(sdist, name, version, wanted, into):
    prefix = "%s-%s/" % (name, version)
    # Every package folder on the way to a chosen file, so the tests can
    # be imported as the subpackages they are (pandas.tests.groupby...).
    # The installed packages have the rest; the conftest the test lays in
    # front adds these folders to their __path__.
    inits = set()
    for w in wanted:
        d = os.path.dirname(w)
        while d:
            if "tests" in d.split("/"):
                inits.add(d + "/__init__.py")
            d = os.path.dirname(d)
    found = set()
    with tarfile.open(sdist) as tar:
        for member in tar.getmembers():
            if not member.isfile() or not member.name.startswith(prefix):
                continue
            inner = member.name[len(prefix):]
            hit = next((w for w in wanted if inner == w or inner.startswith(w.rstrip("/") + "/")), None)
            if hit is None and inner not in inits:
                continue
            # Reference images only where a support line names their folder.
            if "/baseline_images/" in inner and "/baseline_images/" not in hit:
                continue
            if hit is not None:
                found.add(hit)
            target = os.path.join(into, laid_path(inner))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with tar.extractfile(member) as src, open(target, "wb") as out:
                shutil.copyfileobj(src, out)
    missing = sorted(set(wanted) - found)
    if missing:
        sys.exit("fetch.py: not in %s: %s" % (os.path.basename(sdist), ", ".join(missing)))


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: fetch.py OUT_DIR")
    out = os.path.abspath(sys.argv[1])
    suites = os.path.join(HERE, "suites.txt")
    stamp_path = os.path.join(out, "stamp")
    stamp = sha_of(suites) + " " + sha_of(os.path.abspath(__file__))
    if os.path.exists(stamp_path) and open(stamp_path).read() == stamp:
        print("fetch.py: up to date (%s)" % out, file=sys.stderr)
        return
    sdists, wheels, files = read_suites(suites)
    downloads = os.path.join(out, "downloads")
    os.makedirs(downloads, exist_ok=True)
    for name in list(sdists) + ["wheels"]:
        shutil.rmtree(os.path.join(out, name), ignore_errors=True)
    for name, (version, sha256) in sdists.items():
        sdist = download("%s-%s.tar.gz" % (name, version), sha256, downloads)
        wanted = [path for _, pkg, path in files if pkg == name]
        extract(sdist, name, version, wanted, os.path.join(out, name))
    os.makedirs(os.path.join(out, "wheels"))
    for filename, sha256 in wheels.items():
        shutil.copy(download(filename, sha256, downloads), os.path.join(out, "wheels"))
    with open(stamp_path, "w") as f:
        f.write(stamp)
    print("fetch.py: %d test files of %d packages and %d wheels in %s"
          % (sum(1 for k, _, _ in files if k == "test"), len(sdists), len(wheels), out),
          file=sys.stderr)


if __name__ == "__main__":
    import urllib.parse

    main()
