#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# image.sh - boot files for vm.sh in $RXE_VM_DIR (default /tmp/jaccl-rxe-vm):
#   vmlinux      the Debian bookworm kernel (it has rdma_rxe), uncompressed: qemu boots an ELF
#                through its PVH note, which skips SeaBIOS + the xz decompression under TCG
#   initrd.gz    busybox + the modules the guest needs, insmod'ed by guest-init.sh
#   kroot        where the unpacked kernel's lib/modules lives (the guest bind-mounts it)
# The kernel package is downloaded and unpacked, not installed: installing linux-image-amd64
# pulls initramfs-tools and spends a minute in update-initramfs. Idempotent and quick when
# everything is already there.
set -euo pipefail
OUT=${RXE_VM_DIR:-/tmp/jaccl-rxe-vm}
HERE=$(cd "$(dirname "$0")" && pwd)
# crc32_generic: rxe computes its ICRC through the crypto API and cannot create a device
# without it; the rest is virtio/9p for the host root, overlay, and the test network.
MODS="virtio_pci 9pnet_virtio 9p overlay crc32_generic rdma_rxe veth sch_netem"
mkdir -p "$OUT"
KROOT=$OUT/kernel

if ! ls "$KROOT"/lib/modules/*/modules.dep >/dev/null 2>&1; then
    PKG=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
    if [ -z "$PKG" ]; then
        apt-get update -qq
        PKG=$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
    fi
    [ -n "$PKG" ] || { echo "image.sh: cannot resolve linux-image-amd64" >&2; exit 1; }
    echo "image.sh: fetching $PKG"
    rm -rf "$KROOT" "$OUT"/*.deb
    mkdir -p "$KROOT"
    (cd "$OUT" && apt-get download -qq -o APT::Sandbox::User=root "$PKG")
    dpkg-deb --fsys-tarfile "$OUT"/linux-image-*.deb | tar -C "$KROOT" -x --wildcards './boot/vmlinuz-*' './lib/modules/*'
    rm -f "$OUT"/*.deb
    KV=$(basename "$(ls -d "$KROOT"/lib/modules/* | head -1)")
    depmod -b "$KROOT" "$KV" # the package's postinst would have done it
fi
KV=$(basename "$(ls -d "$KROOT"/lib/modules/* | sort -V | tail -1)")
echo "$KROOT" > "$OUT/kroot"

if [ ! -s "$OUT/vmlinux" ] || ! grep -qxF "$KV" "$OUT/vmlinux.kv" 2>/dev/null; then
    # the bzImage carries an xz stream: find its magic and decompress from there
    off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$KROOT/boot/vmlinuz-$KV" | head -1 | cut -d: -f1)
    { tail -c +$((off + 1)) "$KROOT/boot/vmlinuz-$KV" || true; } | xz -dc --single-stream > "$OUT/vmlinux.new"
    [ "$(head -c 4 "$OUT/vmlinux.new" | od -An -tx1 | tr -d ' ')" = 7f454c46 ] ||
        { echo "image.sh: no ELF kernel inside vmlinuz-$KV" >&2; exit 1; }
    mv "$OUT/vmlinux.new" "$OUT/vmlinux"
    echo "$KV" > "$OUT/vmlinux.kv"
fi

# The initramfs: modules in dependency order (modules.dep lists a module's deps; load those
# first, deepest first), busybox, and our init.
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
mkdir -p "$W"/bin "$W"/proc "$W"/sys "$W"/dev "$W"/lower "$W"/rw "$W"/root "$W"/mod
cp /bin/busybox "$W/bin/busybox"
MD=$KROOT/lib/modules/$KV
order=$(awk -v want="$MODS" '
    { m = $1; sub(/:$/, "", m); n = m; sub(/.*\//, "", n); sub(/\.ko.*/, "", n); gsub(/-/, "_", n)
      path[n] = m; dep[n] = ""; for (i = NF; i > 1; i--) dep[n] = dep[n] " " $i }
    function add(p) { if (!(p in seen)) { seen[p] = 1; print p } }
    END { k = split(want, w, " ")
          for (i = 1; i <= k; i++) {
              if (!(w[i] in path)) { print "MISSING " w[i]; continue }
              j = split(dep[w[i]], d, " "); for (x = 1; x <= j; x++) add(d[x]); add(path[w[i]]) } }' "$MD/modules.dep")
n=0
for rel in $order; do
    case $rel in MISSING) echo "image.sh: a module is missing from $KV" >&2; exit 1 ;; esac
    n=$((n + 1))
    base=$(printf '%02d-%s' $n "$(basename "$rel")")
    case $rel in
    *.ko.xz) xz -dc "$MD/$rel" > "$W/mod/${base%.xz}" ;;
    *.ko) cp "$MD/$rel" "$W/mod/$base" ;;
    *) echo "image.sh: unexpected module file $rel" >&2; exit 1 ;;
    esac
done
cp "$HERE/guest-init.sh" "$W/init"
chmod 755 "$W/init"
(cd "$W" && find . | LC_ALL=C sort | /bin/busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$OUT/initrd.gz"
echo "image.sh: $OUT: kernel $KV, $n modules"
