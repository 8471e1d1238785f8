#!/usr/bin/env bash
# Installs (or removes) this Ephemeral release.
#
#   sudo ./install.sh [--prefix DIR]              install; DIR defaults to /usr/local
#   sudo ./install.sh --uninstall [--prefix DIR]  remove what it installed
#
# Installs DIR/bin/{ephemeral,ephemeral-vmm}, DIR/lib/ephemeral/ (replaced
# as a whole), DIR/share/doc/ephemeral/, /etc/ephemeral/ephemeral.toml
# (only if absent; else ephemeral.toml.new beside it) and
# /etc/systemd/system/ephemeral.service. It creates /var/lib/ephemeral
# (the store) and /var/cache/ephemeral (rebuilt caches) and does not start
# the service; if the service is running it is restarted on the new
# version. --uninstall keeps /var/lib/ephemeral and an edited config.
#
# DESTDIR=/some/root puts everything under that root instead (staging,
# tests): no root needed, systemd is left alone.
set -euo pipefail

die() { echo "install.sh: $*" >&2; exit 1; }
say() { echo "install.sh: $*"; }

prefix=/usr/local
action=install
while (($#)); do
    case $1 in
        --prefix) [[ $# -ge 2 ]] || die "--prefix needs a folder"; prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        --uninstall) action=uninstall; shift ;;
        -h | --help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) die "unknown argument $1 (see --help)" ;;
    esac
done
[[ $prefix == /* ]] || die "--prefix must be an absolute path, not $prefix"
prefix=${prefix%/}
[[ -n $prefix ]] || die "--prefix / is not allowed"

destdir=${DESTDIR:-}
destdir=${destdir%/}
if [[ -z $destdir && $(id -u) -ne 0 ]]; then
    die "must run as root (sudo ./install.sh), or set DESTDIR to stage into a folder"
fi

src=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bindir=$prefix/bin
root_bin=$destdir$bindir
root_lib=$destdir$prefix/lib/ephemeral
root_doc=$destdir$prefix/share/doc/ephemeral
root_etc=$destdir/etc/ephemeral
root_unit=$destdir/etc/systemd/system/ephemeral.service

# systemd is asked only when installing for real on a host it runs.
systemd_up() {
    [[ -z $destdir ]] && command -v systemctl >/dev/null && [[ -d /run/systemd/system ]]
}

# `dest` replaced by `src_file` in one rename (a running binary stays valid).
put() {
    local mode=$1 src_file=$2 dest=$3
    install -m "$mode" "$src_file" "$dest.new"
    mv -f "$dest.new" "$dest"
}

do_install() {
    for f in bin/ephemeral bin/ephemeral-vmm lib/ephemeral etc/ephemeral/ephemeral.toml \
        lib/systemd/system/ephemeral.service; do
        [[ -e $src/$f ]] || die "$src/$f is missing: run install.sh from an unpacked release"
    done
    # A unit with @BINDIR@, or one already made for another prefix.
    local unit
    unit=$(sed -e "s|@BINDIR@|$bindir|g" \
        -e "s|^ExecStart=[^ ]*/ephemeral |ExecStart=$bindir/ephemeral |" \
        "$src/lib/systemd/system/ephemeral.service")

    mkdir -p "$root_bin" "$(dirname "$root_lib")" "$(dirname "$root_doc")" "$(dirname "$root_unit")"
    install -d -m 755 "$root_doc" "$root_etc"

    # lib/ephemeral first (the binary finds its parts there), copied beside
    # the old one and swapped in with two renames.
    say "installing $prefix/lib/ephemeral"
    rm -rf "$root_lib.new" "$root_lib.old"
    # Times kept: the components' index knows a program by its length and
    # modification time. Owners not kept: the files are root's.
    cp -R --preserve=mode,timestamps "$src/lib/ephemeral" "$root_lib.new"
    chmod -R u=rwX,go=rX "$root_lib.new"
    if [[ -e $root_lib ]]; then
        mv "$root_lib" "$root_lib.old"
    fi
    mv "$root_lib.new" "$root_lib"
    rm -rf "$root_lib.old"

    say "installing $bindir/ephemeral, $bindir/ephemeral-vmm"
    put 755 "$src/bin/ephemeral" "$root_bin/ephemeral"
    put 755 "$src/bin/ephemeral-vmm" "$root_bin/ephemeral-vmm"

    if [[ -d $src/share/doc/ephemeral ]]; then
        cp -R --preserve=mode,timestamps "$src/share/doc/ephemeral/." "$root_doc/"
        chmod -R u=rwX,go=rX "$root_doc"
    fi

    local conf=$root_etc/ephemeral.toml
    if [[ ! -e $conf ]]; then
        install -m 644 "$src/etc/ephemeral/ephemeral.toml" "$conf"
        say "installed /etc/ephemeral/ephemeral.toml"
    elif cmp -s "$src/etc/ephemeral/ephemeral.toml" "$conf"; then
        rm -f "$conf.new"
    else
        install -m 644 "$src/etc/ephemeral/ephemeral.toml" "$conf.new"
        say "kept your /etc/ephemeral/ephemeral.toml; this release's default is /etc/ephemeral/ephemeral.toml.new"
    fi

    printf '%s\n' "$unit" >"$root_unit.new"
    chmod 644 "$root_unit.new"
    mv -f "$root_unit.new" "$root_unit"
    say "installed /etc/systemd/system/ephemeral.service"

    install -d -m 700 "$destdir/var/lib/ephemeral"
    install -d -m 755 "$destdir/var/cache/ephemeral"

    if systemd_up; then
        systemctl daemon-reload
        if systemctl is-active --quiet ephemeral.service; then
            say "restarting ephemeral (runs in flight get shutdown_grace_seconds to finish)"
            systemctl restart ephemeral.service
        fi
    fi

    local eph=ephemeral
    case ":$PATH:" in *":$bindir:"*) ;; *) eph=$bindir/ephemeral ;; esac
    cat <<EOF

Installed Ephemeral $(cat "$src/share/doc/ephemeral/VERSION" 2>/dev/null || true) under $prefix. Next:

  sudo $eph doctor    # what this host offers: wasm, jail+wasm, kvm+wasm, and why not
  sudo $eph keys create --org acme --config /etc/ephemeral/ephemeral.toml
  sudo $eph orgs set --org acme --balance-micros 50000000 --config /etc/ephemeral/ephemeral.toml
  sudo systemctl enable --now ephemeral
  curl -s http://127.0.0.1:8080/v1/health

Provider keys (OPENAI_API_KEY=...) go in /etc/ephemeral/env (mode 0600).
The server listens on 127.0.0.1:8080: change \`listen\` in /etc/ephemeral/ephemeral.toml.
EOF
}

do_uninstall() {
    if systemd_up && [[ -e $root_unit ]]; then
        systemctl disable --now ephemeral.service >/dev/null 2>&1 || true
    fi
    rm -f "$root_unit"
    rm -f "$root_bin/ephemeral" "$root_bin/ephemeral-vmm"
    rm -rf "$root_lib" "$root_lib.new" "$root_lib.old" "$root_doc"
    local conf=$root_etc/ephemeral.toml
    rm -f "$conf.new"
    if [[ -e $conf && -e $src/etc/ephemeral/ephemeral.toml ]] &&
        cmp -s "$src/etc/ephemeral/ephemeral.toml" "$conf"; then
        rm -f "$conf"
    fi
    rmdir "$root_etc" 2>/dev/null || true
    if systemd_up; then
        systemctl daemon-reload
    fi
    say "removed Ephemeral from $prefix"
    if [[ -e $conf ]]; then say "kept /etc/ephemeral/ephemeral.toml (edited)"; fi
    if [[ -e $root_etc/env ]]; then say "kept /etc/ephemeral/env"; fi
    say "kept /var/lib/ephemeral (the store); /var/cache/ephemeral can be deleted"
}

case $action in
    install) do_install ;;
    uninstall) do_uninstall ;;
esac
