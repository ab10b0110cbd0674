#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# vm.sh [-t SECONDS] [-w DIR] [-x DIR] [-e NAME]... -- COMMAND...
# Runs COMMAND as root inside a throw-away qemu VM with two soft-RoCE devices (see
# guest-stage2.sh) and exits with its exit code: 124 when the VM ran past -t (default 900),
# 125 when the VM died without a result. The guest sees the host's / read-only (writes go to
# a tmpfs) and DIR (default: the current directory) read-write at the same path, so binaries
# built on the host run unchanged; -x DIR shares one more directory read-write (a build folder
# outside DIR: the guest's /tmp is its own). Its environment is clean but for -e NAME and CI.
# Env: RXE_VM_DIR (boot files from image.sh), JVM_MEM (2G), JVM_SMP (host cpus), JVM_MTU.
set -uo pipefail
IMG=${RXE_VM_DIR:-/tmp/jaccl-rxe-vm}
HERE=$(cd "$(dirname "$0")" && pwd)
TMO=900
WORK=$PWD
PASS="CI JVM_MTU"
EXTRA=
while getopts "t:w:x:e:" o; do
    case $o in
    t) TMO=$OPTARG ;;
    w) WORK=$(cd "$OPTARG" && pwd) ;;
    x) EXTRA=$(cd "$OPTARG" && pwd) ;;
    e) PASS="$PASS $OPTARG" ;;
    *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || { echo "usage: vm.sh [-t S] [-w DIR] [-e NAME]... -- COMMAND..." >&2; exit 2; }
for f in vmlinux initrd.gz kroot; do
    [ -f "$IMG/$f" ] || { echo "vm.sh: $IMG/$f missing: run tests/rdma/image.sh" >&2; exit 125; }
done
CTL=$(mktemp -d /tmp/jaccl-vm.XXXXXX)
trap 'rm -rf "$CTL"' EXIT
cp "$HERE/guest-stage2.sh" "$CTL/stage2.sh"
printf '%q ' "$@" > "$CTL/cmd"
{
    printf 'export JVM_CWD=%q JVM_KROOT=%q\n' "$PWD" "$(cat "$IMG/kroot")"
    for v in $PASS; do [ -n "${!v+x}" ] && printf 'export %s=%q\n' "$v" "${!v}"; done
} > "$CTL/env"
# TCG: this machine's /dev/kvm cannot run a stock kernel. -display none keeps firmware escape
# codes out of the log; the serial console is the command's stdout.
timeout --foreground -k 10 "$TMO" qemu-system-x86_64 \
    -accel tcg,thread=multi,tb-size=256 -cpu max -smp "${JVM_SMP:-$(nproc)}" -m "${JVM_MEM:-2G}" \
    -nodefaults -display none -no-reboot -serial stdio \
    -kernel "$IMG/vmlinux" -initrd "$IMG/initrd.gz" \
    -append "console=ttyS0 quiet loglevel=3 panic=-1 mitigations=off tsc=reliable jvm.work=$WORK ${EXTRA:+jvm.extra=$EXTRA}" \
    -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
    -virtfs local,path="$CTL",mount_tag=ctl,security_model=none \
    -virtfs local,path="$WORK",mount_tag=work,security_model=none \
    ${EXTRA:+-virtfs local,path="$EXTRA",mount_tag=extra,security_model=none} </dev/null
q=$?
[ -f "$CTL/rc" ] && exit "$(cat "$CTL/rc")"
[ $q -eq 124 ] && { echo "vm.sh: the VM ran past ${TMO}s" >&2; exit 124; }
echo "vm.sh: the VM ended (qemu exit $q) without a result" >&2
exit 125
