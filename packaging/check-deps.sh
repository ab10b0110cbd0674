#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Stops the build early, with one line naming the package to install, when the compiler or a
# header the next step needs is missing (instead of a page of compiler errors).
#
#   packaging/check-deps.sh CC lib      compiler + rdma-core headers (library and tools)
#   packaging/check-deps.sh CC tests    cmocka (unit tests), prove (reads the tests' TAP)
# Package names for other distributions are in docs/install.md.
set -u
cc=${1:?usage: $0 CC lib|tests}
what=${2:?usage: $0 CC lib|tests}

missing() { # what is missing, Debian package
    echo "jaccl: $1 not found: install the Debian package $2 (apt-get install $2)" >&2
    exit 1
}

have_header() {
    printf '#include <%s>\n' "$1" | $cc -E -x c - >/dev/null 2>&1
}

command -v "${cc%% *}" >/dev/null 2>&1 || missing "C compiler '$cc'" build-essential
case $what in
lib)
    have_header stdio.h || missing "the C library headers (stdio.h)" libc6-dev
    have_header infiniband/verbs.h || missing "infiniband/verbs.h" libibverbs-dev
    ;;
tests)
    # cmocka.h needs these three first (it says so in its own header).
    printf '#include <stdarg.h>\n#include <stddef.h>\n#include <setjmp.h>\n#include <cmocka.h>\n' |
        $cc -E -x c - >/dev/null 2>&1 || missing "cmocka.h" libcmocka-dev
    command -v prove >/dev/null 2>&1 || missing "prove" perl
    ;;
*)
    echo "usage: $0 CC lib|tests" >&2
    exit 2
    ;;
esac
