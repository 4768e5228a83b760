// SPDX-License-Identifier: GPL-2.0
/*
 * Run in the QEMU guest beside UML: every INTERVAL milliseconds (or nine
 * times as long as the last sample took, if that is longer), count the
 * host VMAs (lines of /proc/PID/maps) of every UML host process and read
 * the guest-wide vm_area_struct and maple_node slab bytes; append one CSV
 * row per sample:
 *
 *   t_ms,phase,procs,sum_vmas,max_vmas,kernel_vmas,slab_b
 *
 * UML host processes have comm "linux".  The UML kernel is the one whose
 * parent is not such a process (kernel_vmas: its VMAs, 0 if none runs);
 * its children that do not share its memory (kcmp(KCMP_VM): UML's helper
 * threads do) are the host processes of the guest's address spaces
 * (procs of them, sum_vmas and max_vmas over them).
 * t_ms counts from the sampler's start, phase is the first line of
 * PHASEFILE (written by the workload in UML through hostfs; "-" while it
 * is missing).  With -c, the number of samples taken so far is written
 * to COUNTFILE after each sample, so that a workload can wait for one.
 * Runs until PID exits (-w) or SIGTERM/SIGINT.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: uml-sample [-i MS] [-p PHASEFILE] [-c COUNTFILE] [-w PID] OUT.csv\n"
		"  -i MS         sampling interval (default 500; longer where a\n"
		"                sample takes more than a tenth of it)\n"
		"  -p PHASEFILE  file whose first line names the current phase\n"
		"  -c COUNTFILE  file to write the number of samples taken to\n"
		"  -w PID        stop when PID is gone (default: at SIGTERM)\n");
	exit(2);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* lines of a file, or -1 if it cannot be read */
static long count_lines(const char *path)
{
	static char buf[1 << 16];
	long n = 0;
	ssize_t r;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	while ((r = read(fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; (p = memchr(p, '\n', buf + r - p)); p++)
			n++;
	}
	close(fd);
	return r < 0 ? -1 : n;
}

/* the parent of a process with comm "linux", or 0 for any other */
static long uml_parent(long pid)
{
	char path[64], stat[512] = "", *p;
	long ppid = 0;
	int fd, r;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	r = read(fd, stat, sizeof(stat) - 1);
	close(fd);
	/* pid (comm) state ppid ... */
	if (r <= 0 || !strstr(stat, " (linux) "))
		return 0;
	p = strrchr(stat, ')');
	if (!p || sscanf(p + 1, " %*c %ld", &ppid) != 1)
		return 0;
	return ppid > 0 ? ppid : 0;
}

#define MAX_PROCS 4096
#define KCMP_VM 1	/* <linux/kcmp.h> */

static int same_mm(long a, long b)
{
	return syscall(SYS_kcmp, a, b, KCMP_VM, 0, 0) == 0;
}

static long long slab_bytes(void)
{
	char line[512], name[64];
	long long active, total, size, sum = 0;
	FILE *f = fopen("/proc/slabinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %lld %lld %lld", name, &active, &total,
			   &size) == 4 && (!strcmp(name, "vm_area_struct") ||
					   !strcmp(name, "maple_node")))
			sum += active * size;
	fclose(f);
	return sum;
}

/* write N to FILE through a new file renamed over it: readers see all or nothing */
static void write_count(const char *file, unsigned long n)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", file);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "%lu\n", n);
	if (fclose(f) == 0)
		rename(tmp, file);
}

static void read_phase(const char *file, char *phase, size_t size)
{
	FILE *f = file ? fopen(file, "r") : NULL;

	strcpy(phase, "-");
	if (!f)
		return;
	if (fgets(phase, size, f))
		phase[strcspn(phase, "\n,")] = 0;
	if (!phase[0])
		strcpy(phase, "-");
	fclose(f);
}

int main(int argc, char **argv)
{
	const char *phasefile = NULL, *countfile = NULL;
	unsigned long count = 0;
	long interval = 500, wait_pid = 0;
	struct sigaction sa = { .sa_handler = on_signal };
	uint64_t start;
	FILE *out;
	int opt;

	while ((opt = getopt(argc, argv, "i:p:c:w:h")) != -1) {
		switch (opt) {
		case 'i':
			interval = strtol(optarg, NULL, 10);
			break;
		case 'p':
			phasefile = optarg;
			break;
		case 'c':
			countfile = optarg;
			break;
		case 'w':
			wait_pid = strtol(optarg, NULL, 10);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 1 || interval < 1)
		usage();
	out = fopen(argv[optind], "a");
	if (!out) {
		fprintf(stderr, "uml-sample: %s: %s\n", argv[optind],
			strerror(errno));
		return 1;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	start = now_ms();
	while (!stop && !(wait_pid && kill(wait_pid, 0) && errno == ESRCH)) {
		static long pids[MAX_PROCS], ppids[MAX_PROCS];
		uint64_t t = now_ms() - start, busy, wait;
		long procs = 0, sum = 0, max = 0, kernel = 0;
		int i, j, nr = 0;
		char phase[64], path[64];
		struct dirent *d;
		DIR *proc = opendir("/proc");
		struct timespec ts;

		if (!proc)
			return 1;
		read_phase(phasefile, phase, sizeof(phase));
		while ((d = readdir(proc)) && nr < MAX_PROCS) {
			long pid = strtol(d->d_name, NULL, 10);

			if (pid > 0 && (ppids[nr] = uml_parent(pid)))
				pids[nr++] = pid;
		}
		closedir(proc);
		for (i = 0; i < nr; i++) {
			long n;

			snprintf(path, sizeof(path), "/proc/%ld/maps", pids[i]);
			n = count_lines(path);
			if (n < 0)
				continue;	/* gone meanwhile */
			for (j = 0; j < nr && pids[j] != ppids[i]; j++)
				;
			if (j == nr) {		/* the UML kernel */
				kernel += n;
				continue;
			}
			if (same_mm(pids[i], pids[j]))	/* a helper thread */
				continue;
			procs++;
			sum += n;
			if (n > max)
				max = n;
		}
		fprintf(out, "%llu,%s,%ld,%ld,%ld,%ld,%lld\n",
			(unsigned long long)t, phase, procs, sum, max, kernel,
			slab_bytes());
		fflush(out);
		if (countfile)
			write_count(countfile, ++count);
		/*
		 * Reading the maps of a process with 65k VMAs takes long under
		 * TCG, and holds its mmap_lock: never spend more than a tenth
		 * of the time sampling.
		 */
		busy = now_ms() - start - t;
		wait = interval > 9 * busy ? interval : 9 * busy;
		ts.tv_sec = wait / 1000;
		ts.tv_nsec = wait % 1000 * 1000000;
		nanosleep(&ts, NULL);
	}
	fclose(out);
	return 0;
}
