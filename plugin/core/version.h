/* SPDX-License-Identifier: BSD-3-Clause */
/* jaccl's version string, for the INIT line and jaccl-info. The Makefile generates
 * jaccl_version.h in $(BUILD)/gen from packaging/version.sh (git describe in a checkout, the
 * VERSION file otherwise), so the number lives in one place and a build says what it is. */
#ifndef JACCL_CORE_VERSION_H
#define JACCL_CORE_VERSION_H
#include "jaccl_version.h"
#endif
