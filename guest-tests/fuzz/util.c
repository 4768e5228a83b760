// SPDX-License-Identifier: GPL-2.0
/*
 * rfp_fuzz's helpers: output, the machine, the probes.
 */
#include "fuzz.h"

#include <stdarg.h>
#include <time.h>

void fz_say(const struct fz_opts *o, const char *fmt, ...)
{
	va_list ap;

	fputs(o && o->tag ? o->tag : "", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

double fz_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

bool fz_uml(void)
{
	const char *l = getenv("EXPECT_LEVEL");

	return l && !strcmp(l, "uml");
}

bool fz_two_nodes(void)
{
	return !access("/sys/devices/system/node/node1", F_OK);
}

/* --- probes --- */

static __thread sigjmp_buf fz_jmp;
static __thread volatile int fz_armed, fz_in_rfp, fz_code, fz_si;
static __thread void *volatile fz_addr;
static struct sigaction prev_segv, prev_bus;

static void fz_handler(int sig, siginfo_t *si, void *uc)
{
	struct sigaction *prev = sig == SIGSEGV ? &prev_segv : &prev_bus;

	if (fz_armed) {
		fz_armed = 0;
		fz_code = sig == SIGBUS ? -SIGBUS : si->si_code;
		fz_si = si->si_code;
		fz_addr = si->si_addr;
		siglongjmp(fz_jmp, 1);
	}
	if (fz_in_rfp && (prev->sa_flags & SA_SIGINFO)) {
		prev->sa_sigaction(sig, si, uc);	/* rfp.c's: jumps back */
		return;
	}
	/* no probe running: a real crash, let it kill us */
	signal(sig, SIG_DFL);
}

void fz_catch(void)
{
	/* SA_NODEFER: fz_copy()'s sigsetjmp() need not save the mask */
	struct sigaction sa = {
		.sa_sigaction = fz_handler,
		.sa_flags = SA_SIGINFO | SA_NODEFER,
	};

	rfp_catch();
	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &prev_segv);
	sigaction(SIGBUS, &sa, &prev_bus);
}

#define FZ_RFP(call) ({ int __r; fz_in_rfp = 1; __r = (call); fz_in_rfp = 0; __r; })

int fz_try(void *p, enum rfp_access a)
{
	return FZ_RFP(rfp_try(p, a));
}

int fz_load64(const void *p, uint64_t *v)
{
	return FZ_RFP(rfp_try_load64(p, v));
}

int fz_store64(void *p, uint64_t v)
{
	return FZ_RFP(rfp_try_store64(p, v));
}

int fz_store8(void *p, unsigned char v)
{
	return FZ_RFP(rfp_try_store(p, v));
}

int fz_copy(void *dst, const void *src, size_t len)
{
	const volatile uint64_t *s = src;
	uint64_t *d = dst;

	fz_code = 0;
	fz_addr = NULL;
	if (sigsetjmp(fz_jmp, 0))
		return fz_code;
	fz_armed = 1;
	for (size_t w = 0; w < len / 8; w++)
		d[w] = s[w];
	fz_armed = 0;
	return 0;
}

void *fz_copy_addr(void)
{
	return fz_addr;
}

int fz_copy_si_code(void)
{
	return fz_si;
}

char *fz_scratch_page(void)
{
	int fd = rfp_memfd(1);
	char *m;

	if (fd < 0)
		return MAP_FAILED;
	m = mmap(NULL, PS, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	return m;
}

unsigned long fz_offset_limit(void)
{
	unsigned long lim = 0;
	char *m = fz_scratch_page();

	if (m == MAP_FAILED)
		return 0;
	/* 0 also when offset 0 is refused: no limit to find */
	if (rfp(m, PS, PROT_READ, 0, MAP_CHGPROT | MAP_NONBLOCK) == 0)
		lim = rfp_offset_limit(m);
	munmap(m, PS);
	return lim;
}

const char *fz_prot_str(int prot)
{
	static const char *const s[8] = {
		"---", "r--", "-w-", "rw-", "--x", "r-x", "-wx", "rwx",
	};

	return prot >= 0 && prot < 8 ? s[prot] : "bad";
}
