#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Turns a staged install tree (make install DESTDIR=ROOT PREFIX=/usr ...) into the Debian
# package libnccl-net-jaccl with dpkg-deb alone: no debhelper, no network.
#
#   packaging/deb.sh ROOT OUTDIR        (make deb calls it)
#
# Depends: the libc6 version the binaries' newest GLIBC_ symbol needs (read from the binaries,
# as dpkg-shlibdeps would). libibverbs1 is only Recommended: the plugin dlopens it and falls
# back to TCP without it.
set -eu
root=${1:?usage: $0 ROOT OUTDIR}
out=${2:?usage: $0 ROOT OUTDIR}
here=$(cd "$(dirname "$0")" && pwd)
pkg=libnccl-net-jaccl

die() {
    echo "deb.sh: $*" >&2
    exit 1
}

command -v dpkg-deb >/dev/null || die "dpkg-deb not found: install the Debian package dpkg"
for t in objdump strip; do
    command -v $t >/dev/null || die "$t not found: install the Debian package binutils"
done
arch=$(dpkg --print-architecture)
# Debian versions may not contain '-' in the upstream part without a revision: 0.2.0-3-gabc
# (git describe) becomes 0.2.0+3+gabc.
version=$("$here/version.sh" | tr -- - +)

# The build keeps -g for gdb; the package ships what a library package ships.
find "$root" -type f \( -name '*.so' -o -perm -u+x \) -exec strip --strip-unneeded {} +

glibc=$(find "$root" -type f -perm -u+x -o -type f -name '*.so' | xargs objdump -T 2>/dev/null |
    grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -t. -k1,1n -k2,2n -k3,3n | tail -n 1)
[ -n "$glibc" ] || die "no GLIBC_ symbol versions found in $root"

doc=$root/usr/share/doc/$pkg
[ -d "$doc" ] || die "$doc missing (stage with DOCDIR=/usr/share/doc/$pkg)"
{
    echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
    echo "Upstream-Name: jaccl"
    echo
    echo "Files: *"
    echo "Copyright: The jaccl authors"
    echo "License: BSD-3-Clause"
    sed -e '1,/^$/d' -e 's/^$/./' -e 's/^/ /' "$here/../LICENSE"
} > "$doc/copyright"
chmod 644 "$doc/copyright"

mkdir -p "$root/DEBIAN"
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat > "$root/DEBIAN/control" <<CONTROL
Package: $pkg
Version: $version
Architecture: $arch
Maintainer: The jaccl authors <jaccl@localhost>
Installed-Size: $size
Depends: libc6 (>= $glibc)
Recommends: libibverbs1
Section: libs
Priority: optional
Description: NCCL net and CollNet plugin with JACCL's ring and mesh collectives
 libnccl-net-jaccl.so gives NCCL a point-to-point transport over RDMA verbs
 (UC or RC queue pairs) or TCP, and CollNet all-reduce, reduce-scatter and
 all-gather built on JACCL's pipelined ring and fully connected mesh.
 Load it with NCCL_NET_PLUGIN=jaccl; jaccl-info shows what it would use.
CONTROL
# The library lives in the loader's default path; refresh its cache on install and removal.
echo "activate-noawait ldconfig" > "$root/DEBIAN/triggers"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' | sort |
    xargs md5sum) > "$root/DEBIAN/md5sums"
chmod 644 "$root/DEBIAN/control" "$root/DEBIAN/triggers" "$root/DEBIAN/md5sums"

deb=$out/${pkg}_${version}_${arch}.deb
dpkg-deb --root-owner-group --build "$root" "$deb" >/dev/null
echo "$deb"
