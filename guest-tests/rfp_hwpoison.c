// SPDX-License-Identifier: GPL-2.0
/*
 * Memory failure of a page mapped at a nonlinear address: a process that
 * asked for early kill (PR_MCE_KILL_EARLY) gets SIGBUS with si_addr at the
 * address that maps the page, not at the page's linear address, and the
 * address then faults with SIGBUS.  MADV_HWPOISON injects it (root,
 * CONFIG_MEMORY_FAILURE); the poisoned page stays out of use in this boot.
 */
#include "rfp.h"

#include <sys/prctl.h>
#include <sys/wait.h>

#ifndef MADV_HWPOISON
#define MADV_HWPOISON 100
#endif

#define NPAGES 16
#define AT 9		/* the address (page index) ... */
#define PGOFF 5		/* ... that maps this file page, inside the linear range */

static volatile void *bus_addr;
static volatile int bus_code;

static void on_bus(int sig, siginfo_t *si, void *uc)
{
	(void)sig;
	(void)uc;
	bus_addr = si->si_addr;
	bus_code = si->si_code;
}

/* In a child: 0 all well, 1 no early SIGBUS, 2 wrong si_addr, 3 setup, 4 skip */
static int child(char *m, int *detail)
{
	struct sigaction sa = { .sa_sigaction = on_bus, .sa_flags = SA_SIGINFO };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGBUS, &sa, NULL) ||
	    prctl(PR_MCE_KILL, PR_MCE_KILL_SET, PR_MCE_KILL_EARLY, 0, 0))
		return 3;
	m[AT * PS] = 1;		/* present and dirty */
	if (madvise(m + AT * PS, PS, MADV_HWPOISON))
		return errno == EINVAL ? 4 : 3;
	if (!bus_addr)
		return 1;
	*detail = (int)(((char *)bus_addr - m) / (long)PS);
	return bus_addr == m + AT * PS ? 0 : 2;
}

TEST(early_kill_at_nonlinear_address)
{
	struct rfp_area a;
	int st, detail = -1, pfd[2];
	pid_t pid;

	ASSERT_EQ(0, rfp_area_open(&a, NPAGES, NPAGES, NPAGES, PROT_READ | PROT_WRITE));
	RFP_FIRST_CHGPROT(return, a.m + AT * PS, PS, PROT_READ | PROT_WRITE, PGOFF);
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int r = child(a.m, &detail);

		if (write(pfd[1], &detail, sizeof(detail)) != sizeof(detail))
			r = 3;
		_exit(r);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(sizeof(detail), read(pfd[0], &detail, sizeof(detail)));
	ASSERT_TRUE(WIFEXITED(st)) TH_LOG("child status %#x", st);
	if (WEXITSTATUS(st) == 4)
		SKIP(return, "MADV_HWPOISON refused: no CONFIG_MEMORY_FAILURE");
	EXPECT_EQ(0, WEXITSTATUS(st))
		TH_LOG("1: no early SIGBUS, 2: si_addr at page %d, not %d (linear: %d)",
		       detail, AT, PGOFF);
	rfp_area_close(&a);
}

TEST_HARNESS_MAIN
