# shellcheck shell=bash
# The .deb of a release tree. Sourced by dist/build.sh:
#
#   source dist/deb.sh
#   make_deb TREE VERSION OUT_DIR     # writes OUT_DIR/ephemeral_VERSION_amd64.deb
#
# TREE is the release tree (bin/, lib/ephemeral/, etc/ephemeral/,
# lib/systemd/system/, share/doc/ephemeral/). Laid out the Debian way:
#   /usr/bin/ephemeral, /usr/bin/ephemeral-vmm
#   /usr/lib/ephemeral/                 (found from /usr/bin/ephemeral)
#   /etc/ephemeral/ephemeral.toml       (a conffile)
#   /lib/systemd/system/ephemeral.service   (ExecStart=/usr/bin/ephemeral ...)
#   /usr/share/doc/ephemeral/           docs; copyright = Ephemeral's licence
#                                       and THIRD-PARTY-LICENSES.md
# Maintainer scripts and control: dist/deb/. Prints the .deb's path.

make_deb() {
    local tree=${1:?usage: make_deb TREE VERSION OUT_DIR} version=${2:?usage: make_deb TREE VERSION OUT_DIR}
    local out=${3:?usage: make_deb TREE VERSION OUT_DIR}
    local here
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    local f
    for f in bin/ephemeral bin/ephemeral-vmm lib/ephemeral etc/ephemeral/ephemeral.toml \
        lib/systemd/system/ephemeral.service; do
        [[ -e $tree/$f ]] || { echo "make_deb: $tree/$f is missing" >&2; return 1; }
    done
    command -v dpkg-deb >/dev/null || { echo "make_deb: dpkg-deb is needed" >&2; return 1; }

    mkdir -p "$out"
    out=$(cd "$out" && pwd)
    local stage=$out/.deb-stage
    local root=$stage/ephemeral_${version}_amd64
    rm -rf "$stage"
    mkdir -p "$root"/{DEBIAN,usr/bin,usr/lib,etc/ephemeral,lib/systemd/system,usr/share/doc/ephemeral}

    install -m 755 "$tree/bin/ephemeral" "$tree/bin/ephemeral-vmm" "$root/usr/bin/"
    # Hard links when the tree is on the same file system (no copy of the
    # large programs and components); a copy with the same modes and times
    # otherwise. Times matter: the components' index knows a program by
    # its length and modification time.
    cp -al "$tree/lib/ephemeral" "$root/usr/lib/ephemeral" 2>/dev/null || {
        rm -rf "$root/usr/lib/ephemeral"
        cp -R --preserve=mode,timestamps "$tree/lib/ephemeral" "$root/usr/lib/ephemeral"
    }
    install -m 644 "$tree/etc/ephemeral/ephemeral.toml" "$root/etc/ephemeral/ephemeral.toml"
    # The unit with @BINDIR@, or one already made for another prefix.
    sed -e 's|@BINDIR@|/usr/bin|g' -e 's|^ExecStart=[^ ]*/ephemeral |ExecStart=/usr/bin/ephemeral |' \
        "$tree/lib/systemd/system/ephemeral.service" >"$root/lib/systemd/system/ephemeral.service"
    chmod 644 "$root/lib/systemd/system/ephemeral.service"

    local doc=$root/usr/share/doc/ephemeral
    if [[ -d $tree/share/doc/ephemeral ]]; then
        for f in "$tree"/share/doc/ephemeral/*; do
            [[ -f $f ]] || continue
            case ${f##*/} in THIRD-PARTY-LICENSES.md | LICENSE) continue ;; esac
            install -m 644 "$f" "$doc/"
        done
    fi
    {
        echo "Ephemeral"
        echo
        echo "Licence: Apache-2.0 (on Debian systems: /usr/share/common-licenses/Apache-2.0)."
        if [[ -f $tree/share/doc/ephemeral/LICENSE ]]; then
            echo
            cat "$tree/share/doc/ephemeral/LICENSE"
        fi
        if [[ -f $tree/share/doc/ephemeral/THIRD-PARTY-LICENSES.md ]]; then
            echo
            echo "It ships third-party software under the licences below."
            echo
            cat "$tree/share/doc/ephemeral/THIRD-PARTY-LICENSES.md"
        fi
    } >"$doc/copyright"
    chmod 644 "$doc/copyright"
    if [[ -f $tree/share/doc/ephemeral/THIRD-PARTY-LICENSES.md ]]; then
        ln -s copyright "$doc/THIRD-PARTY-LICENSES.md"
    fi

    local size
    size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
    sed -e "s|@VERSION@|$version|g" -e "s|@INSTALLED_SIZE@|$size|g" "$here/deb/control.in" \
        >"$root/DEBIAN/control"
    install -m 644 "$here/deb/conffiles" "$root/DEBIAN/conffiles"
    install -m 755 "$here/deb/postinst" "$here/deb/prerm" "$here/deb/postrm" "$root/DEBIAN/"
    # Every file but the conffiles (dpkg keeps their sums itself).
    (cd "$root" && find . \( -path ./DEBIAN -o -path ./etc \) -prune -o -type f -printf '%P\0' | sort -z |
        xargs -0 md5sum) >"$root/DEBIAN/md5sums"
    chmod 644 "$root/DEBIAN/md5sums"

    local deb=$out/ephemeral_${version}_amd64.deb
    # gzip: fast to make, and every dpkg reads it.
    dpkg-deb --root-owner-group -Zgzip -z6 --build "$root" "$deb.tmp" >/dev/null
    mv -f "$deb.tmp" "$deb"
    rm -rf "$stage"
    echo "$deb"
}
