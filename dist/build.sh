#!/usr/bin/env bash
# Builds the release an operator installs (`./dev dist` runs this after
# its set-up): one tree, packed as a tarball and as a .deb.
#
#   dist/build.sh [OUT_DIR]     default OUT_DIR: $EPHEMERAL_CACHE/dist
#
# The tree (`ephemeral-<version>-x86_64-linux/`):
#   bin/ephemeral, bin/ephemeral-vmm        static (musl), stripped
#   lib/ephemeral/guest/                    vmlinux, ephemeral-worker (the
#                                           guest's init), disk.img(.list)
#   lib/ephemeral/programs/                 python3, node, python3-sci, …
#   lib/ephemeral/components/               those precompiled, portable x86-64
#   etc/ephemeral/ephemeral.toml            default config
#   lib/systemd/system/ephemeral.service    the unit
#   share/doc/ephemeral/                    README, licences
#   install.sh
# The binary finds everything from its own path (edge/src/install.rs).
#
# The last line on stdout is the tarball's path; the .deb is beside it.
# A tree whose inputs did not change since the last build is not packed
# again.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf 'dist: %s\n' "$*" >&2; }

cache=${EPHEMERAL_CACHE:-/var/cache/ephemeral}
out=${1:-$cache/dist}
programs=${EPHEMERAL_PROGRAMS_DIR:-$cache/programs}
kernel=${EPHEMERAL_GUEST_DIR:-$cache/guest}/vmlinux
musl_dir=${EPHEMERAL_LAB_TARGET_DIR:-$cache/target-musl}
triple=x86_64-unknown-linux-musl
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
name=ephemeral-$version-x86_64-linux

for need in "$programs/python3.wasm" "$kernel"; do
    [[ -e $need ]] || { echo "dist: missing $need (./dev dist builds it)" >&2; exit 1; }
done
command -v mke2fs >/dev/null || { echo "dist: mke2fs (e2fsprogs) is needed for the guest's disk" >&2; exit 1; }
command -v dpkg-deb >/dev/null || { echo "dist: dpkg-deb is needed for the .deb" >&2; exit 1; }

# The same builds, with the same arguments, as the lab's tests make: one
# wasmtime for musl, shared.
say "static binaries (cargo, $triple, release; target folder $musl_dir)"
musl_build() {
    CARGO_TARGET_DIR=$musl_dir cargo build --locked --release --target "$triple" "$@" >&2
}
musl_build -p ephemeral-edge --bin ephemeral
musl_build -p ephemeral-worker --bin ephemeral-worker -p ephemeral-vm --bin ephemeral-vmm --example microvm_run
built=$musl_dir/$triple/release

mkdir -p "$out"
stage=$out/stage
tree=$stage/$name
rm -rf "$stage"
mkdir -p "$tree"/{bin,lib/ephemeral/guest,etc/ephemeral,lib/systemd/system,share/doc/ephemeral}

say "tree $tree"
strip -o "$tree/bin/ephemeral" "$built/ephemeral"
strip -o "$tree/bin/ephemeral-vmm" "$built/ephemeral-vmm"
strip -o "$tree/lib/ephemeral/guest/ephemeral-worker" "$built/ephemeral-worker"
cp "$kernel" "$tree/lib/ephemeral/guest/vmlinux"
# The programs with their times: the components' index knows a program's
# file by its length and modification second.
mkdir -p "$tree/lib/ephemeral/programs"
for f in "$programs"/*; do
    case $f in *.stamp) continue ;; esac
    cp -a "$f" "$tree/lib/ephemeral/programs/"
done

# Compiled by the very binary shipped, into a cache kept between builds
# (entries are named by their inputs), then copied with their index.
components_cache=$cache/dist-components
say "components, precompiled for a portable x86-64 CPU ($components_cache)"
"$tree/bin/ephemeral" precompile --programs "$tree/lib/ephemeral/programs" --out "$components_cache" >"$out/components.txt"
mkdir -p "$tree/lib/ephemeral/components"
awk '{print $NF}' "$out/components.txt" | while read -r entry; do
    cp -a "$entry" "$tree/lib/ephemeral/components/"
done
cp -a "$components_cache/programs.index" "$tree/lib/ephemeral/components/"

say "the guest's disk of programs with files of their own (mke2fs)"
"$tree/bin/ephemeral-vmm" disk --cache "$tree/lib/ephemeral/components" \
    --programs "$tree/lib/ephemeral/programs" --out "$tree/lib/ephemeral/guest/disk.img" >&2
rm -f "$tree/lib/ephemeral/components/"*.lock

say "config, unit, docs, licences"
cp dist/ephemeral.toml "$tree/etc/ephemeral/ephemeral.toml"
sed 's|@BINDIR@|/usr/local/bin|g' dist/ephemeral.service >"$tree/lib/systemd/system/ephemeral.service"
install -m 755 dist/install.sh "$tree/install.sh"
cp README.md docs/deploy.md "$tree/share/doc/ephemeral/"
python3 dist/licenses.py "$tree/share/doc/ephemeral/THIRD-PARTY-LICENSES.md"
printf '%s\n' "$version" >"$tree/share/doc/ephemeral/VERSION"

# Packed again only when what goes in changed.
# (The programs and components by length and time, kept by `cp -a`; the
# disk is made of them; everything else by content.)
stamp=$(
    cd "$tree"
    find lib/ephemeral/programs lib/ephemeral/components -printf '%P %s %T@\n' | sort
    find . -type f ! -path './lib/ephemeral/programs/*' ! -path './lib/ephemeral/components/*' \
        ! -name disk.img -print0 | sort -z | xargs -0 sha256sum
)
stamp=$(sha256sum <<<"$stamp" | cut -c1-32)
tarball=$out/$name.tar.gz
deb=$out/ephemeral_${version}_amd64.deb
if [[ -f $tarball && -f $deb && "$(cat "$out/.stamp" 2>/dev/null)" == "$stamp" ]]; then
    say "up to date: $tarball"
else
    say "packing $tarball"
    rm -f "$out/.stamp"
    compress=(gzip -4)
    command -v pigz >/dev/null && compress=(pigz -4)
    tar -C "$stage" --owner=0 --group=0 --numeric-owner -cf - "$name" | "${compress[@]}" >"$tarball.tmp"
    mv "$tarball.tmp" "$tarball"
    say "packing $deb"
    # shellcheck source=dist/deb.sh
    source dist/deb.sh
    make_deb "$tree" "$version" "$out" >&2
    printf '%s\n' "$stamp" >"$out/.stamp"
fi
say "$(du -h "$tarball" | cut -f1) $tarball"
say "$(du -h "$deb" | cut -f1) $deb"
echo "$tarball"
