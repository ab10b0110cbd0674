/* SPDX-License-Identifier: BSD-3-Clause */
/* A test program's scenarios: each has a name (short, kebab-case, unique in the program), by
 * which the command line selects it, and ends in one result line in TAP
 * (https://testanything.org): "ok 3 - ring-4 (1.2 s)" or "not ok 3 - ...", then the plan
 * "1..N" once the program ends. prove reads a program directly; tests/run_all.sh renumbers
 * every program's lines into one stream.
 *
 * The command line's words select scenarios: a name, an fnmatch(3) pattern ("abort-*"), or an
 * index (the scenario's place, from 0, in the order the program runs them); no word selects
 * every scenario. A word that selects nothing fails the program: a misspelt filter is not a
 * pass. "--list" prints the selected scenarios (name, description) and runs none. */
#ifndef MP_SCENARIO_H
#define MP_SCENARIO_H

/* Test program entry: banner, default environment, and the scenario filter from argv (argc 0:
 * none, every scenario runs; the tools, whose arguments mean something else, pass 0). */
void mp_begin(const char *test, const char *what, int argc, char **argv);

/* 1 when the command line said --list: a program skips what it would print after its runs. */
int mp_listing(void);

/* Called by mp_run before a scenario: 1 when it is to run (its banner printed), 0 when the
 * filter leaves it out or the program only lists, -1 when its name breaks the rules above
 * (its "not ok" line printed). */
int mp_scenario_begin(const char *name, const char *what, int nranks);
/* Its result line. */
void mp_scenario_end(const char *name, int failed, double secs);

/* Test program exit: a "not ok" line per filter word that selected nothing, the summary and
 * the plan; the exit status (0 only when every scenario passed). */
int mp_end(int failed_scenarios);

#endif
