/* SPDX-License-Identifier: BSD-3-Clause */
/* Writes docs/configuration.md: the prose of a template with its "@KNOBS@" line replaced by one
 * table per section of plugin/util/param.c's knobs (name, type, default, range, NCCL fallback,
 * description), so the document cannot drift from the table. `make docs` runs it;
 * tests/check_config_doc.sh fails when the committed file differs from its output.
 *
 *   config-doc TEMPLATE > docs/configuration.md */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/param.h"

#define MARKER "@KNOBS@"

static const char *type_of(const struct jaccl_param_desc *d)
{
    if (d->type == JPT_INT)
        return "integer";
    return d->choices ? "choice" : "string";
}

static void put_default(const struct jaccl_param_desc *d)
{
    if (d->type == JPT_INT)
        printf("`%" PRId64 "`", d->def);
    else if (d->def_str[0] == '\0')
        printf("empty");
    else
        printf("`%s`", d->def_str);
}

static void put_range(const struct jaccl_param_desc *d)
{
    if (d->type == JPT_INT) {
        printf("%" PRId64 " – %" PRId64, d->min, d->max);
        if (d->unit)
            printf(" (%s)", d->unit);
        return;
    }
    if (d->choices == NULL) {
        printf("text");
        return;
    }
    for (const char *const *c = d->choices; *c; c++)
        printf(*c[0] ? "%s`%s`" : "%sempty%s", c == d->choices ? "" : ", ", *c);
}

static void put_row(const struct jaccl_param_desc *d)
{
    printf("| `%s` | %s | ", d->name, type_of(d));
    put_default(d);
    printf(" | ");
    put_range(d);
    printf(" | ");
    if (d->nccl_name)
        printf("`%s`", d->nccl_name);
    else
        printf("–");
    printf(" | %s |\n", d->doc);
}

/* 1 if an earlier knob in the table already opened this section. */
static int section_seen(int upto, const char *section)
{
    for (int id = 0; id < upto; id++)
        if (strcmp(jaccl_param_desc((enum jaccl_param_id)id)->section, section) == 0)
            return 1;
    return 0;
}

/* Sections in the order they first appear in the table, knobs in table order within each. */
static void put_knobs(void)
{
    for (int first = 0; first < JP_NUM_PARAMS; first++) {
        const char *section = jaccl_param_desc((enum jaccl_param_id)first)->section;
        if (section_seen(first, section))
            continue;
        printf("## %s\n\n", section);
        printf("| Variable | Type | Default | Values | NCCL fallback | What it does |\n");
        printf("|---|---|---|---|---|---|\n");
        for (int id = first; id < JP_NUM_PARAMS; id++) {
            const struct jaccl_param_desc *d = jaccl_param_desc((enum jaccl_param_id)id);
            if (strcmp(d->section, section) == 0)
                put_row(d);
        }
        printf("\n");
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s TEMPLATE > configuration.md\n", argv[0]);
        return 2;
    }
    FILE *in = fopen(argv[1], "r");
    if (in == NULL) {
        perror(argv[1]);
        return 1;
    }
    char line[4096];
    int markers = 0;
    while (fgets(line, sizeof(line), in)) {
        if (strcmp(line, MARKER "\n") == 0) {
            put_knobs();
            markers++;
        } else {
            fputs(line, stdout);
        }
    }
    fclose(in);
    if (markers != 1) {
        fprintf(stderr, "%s: expected exactly one %s line, found %d\n", argv[1], MARKER, markers);
        return 1;
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
