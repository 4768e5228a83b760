// SPDX-License-Identifier: GPL-2.0
/*
 * The example program of examples/ as a guest test: guest-run-tests runs
 * this at every guest-tests level of scripts/test-levels, in the QEMU
 * guest and in UML.  It runs chgprot-example (examples/chgprot-example.c,
 * /usr/local/bin in both images; CHGPROT_EXAMPLE names another) and
 * checks the way it took against what MAP_CHGPROT must do at the level:
 * EXPECT_MANYPROTS=on, the collapsed way ("result: collapsed"); off or
 * absent, the per-page fallback ("result: per-page"); and exit status 0.
 * One TAP result, the program's output as its diagnostics; without
 * EXPECT_MANYPROTS a skip.  Exit status 0, 1 (failed) or 4 (skipped), as
 * kselftest's.
 *
 * Not a shell script: in UML under TCG every process that maps shared
 * libraries (bash) costs seconds.  No kselftest harness either: the
 * result's name says which way the level wants.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	const char *prog = getenv("CHGPROT_EXAMPLE") ?: "chgprot-example";
	const char *mode = getenv("EXPECT_MANYPROTS") ?: "";
	const char *want = NULL, *name = "chgprot-example";
	char line[512], result[512] = "";
	int fds[2], status = -1;
	FILE *out;
	pid_t pid;

	if (!strcmp(mode, "on")) {
		want = "collapsed";
		name = "chgprot-example (MAP_CHGPROT)";
	} else if (!strcmp(mode, "off") || !strcmp(mode, "absent")) {
		want = "per-page";
		name = "chgprot-example (per-page fallback)";
	}
	printf("1..1\n#  RUN           %s ...\n", name);
	fflush(stdout);

	pid = pipe(fds) ? -1 : fork();
	if (pid < 0) {
		perror("pipe, fork");
		return 1;
	}
	if (!pid) {
		dup2(fds[1], STDOUT_FILENO);
		dup2(fds[1], STDERR_FILENO);
		close(fds[0]);
		close(fds[1]);
		execlp(prog, prog, (char *)NULL);
		perror(prog);
		_exit(127);
	}
	close(fds[1]);
	out = fdopen(fds[0], "r");
	while (out && fgets(line, sizeof(line), out)) {
		printf("# %s", line);
		if (!strncmp(line, "result: ", 8))
			snprintf(result, sizeof(result), "%s", line + 8);
	}
	waitpid(pid, &status, 0);

	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		if (WIFSIGNALED(status))
			printf("# %s: killed by signal %d\n", prog, WTERMSIG(status));
		else
			printf("# %s: exit status %d\n", prog, WEXITSTATUS(status));
		printf("not ok 1 %s\n", name);
		return 1;
	}
	if (!want) {
		printf("ok 1 %s # SKIP EXPECT_MANYPROTS=%s: the way it took is not checked\n",
		       name, *mode ? mode : "(unset)");
		return 4;
	}
	if (strncmp(result, want, strlen(want))) {
		printf("# EXPECT_MANYPROTS=%s wants \"result: %s\"\nnot ok 1 %s\n",
		       mode, want, name);
		return 1;
	}
	printf("ok 1 %s\n", name);
	return 0;
}
