/* SPDX-License-Identifier: BSD-3-Clause */
/* Scenario names, the command line's filter, and the TAP result lines (mp_scenario.h). */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mp_check.h"
#include "mp_scenario.h"
#include "mp_util.h"

#define MAX_WORDS 64

static const char *g_test = "test";
static int g_index;    /* scenarios met so far, selected or not: the next one's index */
static int g_reported; /* result lines printed: the next one's number - 1 */
static int g_listing;
static int g_nwords;
static const char *g_word[MAX_WORDS];
static int g_hits[MAX_WORDS];
static char **g_names; /* every name met, for the uniqueness rule */
static int g_nnames;

/* Lower-case letters, digits and single inner hyphens, not only digits (a word of digits
 * selects by index). */
static int name_ok(const char *s)
{
    int letter = 0;
    if (!*s || *s == '-' || s[strlen(s) - 1] == '-' || strstr(s, "--"))
        return 0;
    for (; *s; s++) {
        if (*s >= 'a' && *s <= 'z')
            letter = 1;
        else if (!(*s >= '0' && *s <= '9') && *s != '-')
            return 0;
    }
    return letter;
}

/* 0, or -1 when the name was met before (or cannot be remembered). */
static int name_new(const char *name)
{
    for (int i = 0; i < g_nnames; i++)
        if (strcmp(g_names[i], name) == 0)
            return -1;
    char **grown = realloc(g_names, (size_t)(g_nnames + 1) * sizeof(*grown));
    if (!grown)
        return -1;
    g_names = grown;
    if (!(g_names[g_nnames] = strdup(name)))
        return -1;
    g_nnames++;
    return 0;
}

static int word_selects(const char *word, const char *name, int index)
{
    char *end;
    long v = strtol(word, &end, 10);
    if (*word && !*end)
        return v == index;
    return fnmatch(word, name, 0) == 0;
}

/* Every word is tried, so each one's hits count; no words: everything. */
static int selected(const char *name, int index)
{
    int sel = g_nwords == 0;
    for (int w = 0; w < g_nwords; w++)
        if (word_selects(g_word[w], name, index)) {
            g_hits[w]++;
            sel = 1;
        }
    return sel;
}

void mp_begin(const char *test, const char *what, int argc, char **argv)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    g_test = test;
    for (int a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--list") == 0)
            g_listing = 1;
        else if (g_nwords < MAX_WORDS)
            g_word[g_nwords++] = argv[a];
        else
            mp_note("too many scenario words: %s ignored", argv[a]);
    }
    mp_default_env();
    if (!g_listing)
        mp_note("=== %s: %s", test, what);
}

int mp_listing(void)
{
    return g_listing;
}

int mp_scenario_begin(const char *name, const char *what, int nranks)
{
    int index = g_index++;
    if (!name_ok(name) || name_new(name) != 0) {
        printf("not ok %d - %s (scenario %d: the name is not kebab-case or not unique)\n",
               ++g_reported, name, index);
        return -1;
    }
    if (!selected(name, index))
        return 0;
    if (g_listing) {
        printf("%-28s %s (%d ranks)\n", name, what, nranks);
        return 0;
    }
    mp_note("--- %s/%s: %s (%d ranks)", g_test, name, what, nranks);
    return 1;
}

void mp_scenario_end(const char *name, int failed, double secs)
{
    printf("%sok %d - %s (%.1f s)\n", failed ? "not " : "", ++g_reported, name, secs);
}

int mp_end(int failed_scenarios)
{
    int failed = failed_scenarios;
    for (int w = 0; w < g_nwords; w++) {
        if (g_hits[w])
            continue;
        failed++;
        if (g_listing)
            fprintf(stderr, "%s: no scenario is named %s\n", g_test, g_word[w]);
        else
            printf("not ok %d - %s (selects no scenario: --list shows them)\n", ++g_reported,
                   g_word[w]);
    }
    if (g_listing)
        return failed ? 1 : 0;
    mp_note("=== %s: %s (%d of %d scenarios failed)", g_test, failed ? "FAIL" : "PASS", failed,
            g_reported);
    printf("1..%d\n", g_reported);
    return failed ? 1 : 0;
}
