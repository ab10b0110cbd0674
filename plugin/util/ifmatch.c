/* SPDX-License-Identifier: BSD-3-Clause */
/* NCCL's device-list syntax, parsed once into a struct so matching is a plain loop.
 *
 * Differences from NCCL's parseStringList, all on input NCCL would silently misread: blanks
 * around entries are ignored (" eth0, eth1" is a common way to write a list), and a bad port
 * ("mlx5_0:x", "mlx5_0:"), an empty name (":1"), a name longer than 63 characters or more than
 * JACCL_IFLIST_MAX entries makes the whole spec malformed instead of half-applied. */
#include "util/ifmatch.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>

static const char *skip_blanks(const char *p, const char *end)
{
    while (p < end && isspace((unsigned char)*p))
        p++;
    return p;
}

static const char *trim_end(const char *begin, const char *end)
{
    while (end > begin && isspace((unsigned char)end[-1]))
        end--;
    return end;
}

/* Decimal port in [0, 65535]; the text must be all digits. */
static int parse_port(const char *p, const char *end, int *port)
{
    if (p == end || end - p > 5)
        return -1;
    int v = 0;
    for (; p < end; p++) {
        if (!isdigit((unsigned char)*p))
            return -1;
        v = v * 10 + (*p - '0');
    }
    if (v > 65535)
        return -1;
    *port = v;
    return 0;
}

/* One entry [b, e), already trimmed and non-empty. */
static int add_entry(struct jaccl_iflist *l, const char *b, const char *e)
{
    if (l->n >= JACCL_IFLIST_MAX)
        return -1;
    const char *colon = memchr(b, ':', (size_t)(e - b));
    const char *name_end = colon ? trim_end(b, colon) : e;
    size_t len = (size_t)(name_end - b);
    if (len == 0 || len >= sizeof(l->ent[0].name))
        return -1;
    int port = -1;
    if (colon && parse_port(skip_blanks(colon + 1, e), e, &port) != 0)
        return -1;
    memcpy(l->ent[l->n].name, b, len);
    l->ent[l->n].name[len] = '\0';
    l->ent[l->n].port = port;
    l->n++;
    return 0;
}

static int parse_entries(struct jaccl_iflist *l, const char *p, const char *end)
{
    while (p < end) {
        const char *comma = memchr(p, ',', (size_t)(end - p));
        const char *e = comma ? comma : end;
        const char *b = skip_blanks(p, e);
        const char *te = trim_end(b, e);
        if (te > b && add_entry(l, b, te) != 0) /* empty entries (",,") are skipped */
            return -1;
        p = comma ? comma + 1 : end;
    }
    return 0;
}

int jaccl_iflist_parse(const char *spec, struct jaccl_iflist *out)
{
    memset(out, 0, sizeof(*out));
    if (spec == NULL)
        return 0;
    const char *end = spec + strlen(spec);
    const char *p = skip_blanks(spec, end);
    if (p < end && *p == '^') {
        out->exclude = 1;
        p = skip_blanks(p + 1, end);
    }
    if (p < end && *p == '=') {
        out->exact = 1;
        p++;
    }
    if (parse_entries(out, p, end) != 0) {
        /* Leave an empty list behind so a caller that ignores the error is not half-served. */
        memset(out, 0, sizeof(*out));
        return -1;
    }
    return 0;
}

static int entry_matches(const struct jaccl_iflist *l, int i, const char *name, int port)
{
    const char *want = l->ent[i].name;
    int name_ok = l->exact ? strcmp(name, want) == 0 : strncmp(name, want, strlen(want)) == 0;
    int want_port = l->ent[i].port;
    return name_ok && (want_port == -1 || port == -1 || want_port == port);
}

int jaccl_iflist_match(const struct jaccl_iflist *l, const char *name, int port)
{
    if (l == NULL || l->n == 0)
        return 1;
    int hit = 0;
    for (int i = 0; i < l->n && !hit; i++)
        hit = entry_matches(l, i, name, port);
    return l->exclude ? !hit : hit;
}
