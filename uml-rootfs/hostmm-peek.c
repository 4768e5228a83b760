// SPDX-License-Identifier: GPL-2.0
/*
 * Run in the QEMU guest by uml-rootfs/hostmm-check: look at a guest page
 * of UML from the outside, in the UML host process that maps it (a guest
 * address is the same address there).  Whether UML maps its pages one
 * host mmap() each or sets them in one window with
 * remap_file_pages(MAP_CHGPROT), the host must never allow more than the
 * guest page's own protection.
 *
 * usage: hostmm-peek find ADDR MARKER PID...
 *            print each PID whose memory at ADDR starts with MARKER
 *        hostmm-peek vm-read PID ADDR      process_vm_readv() of one byte
 *        hostmm-peek vm-write PID ADDR     process_vm_writev() of 16 bytes
 *        hostmm-peek mem-write PID ADDR    pwrite() of 16 bytes to /proc/PID/mem
 *
 * The access commands print "ok" if the access worked, else the errno's
 * name (EFAULT, EIO, ...), and exit 0 either way; the caller decides what
 * was wanted.  Exit status 2: usage error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

/* what a write that got through would leave in the guest page */
static char scribble[16] = "hostmm scribble";

static unsigned long parse(const char *s)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || end == s) {
		fprintf(stderr, "hostmm-peek: bad number %s\n", s);
		exit(2);
	}
	return v;
}

static void report(ssize_t ret)
{
	if (ret >= 0)
		printf("ok\n");
	else
		printf("%s\n", strerrorname_np(errno) ?: "unknown errno");
}

static ssize_t vm_rw(pid_t pid, unsigned long addr, void *buf, size_t len, int write)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)addr, len };

	return write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
		     : process_vm_readv(pid, &local, 1, &remote, 1, 0);
}

int main(int argc, char **argv)
{
	char buf[4096];
	pid_t pid;
	unsigned long addr;

	if (argc >= 5 && !strcmp(argv[1], "find")) {
		size_t len = strlen(argv[3]);

		addr = parse(argv[2]);
		if (len == 0 || len > sizeof(buf)) {
			fprintf(stderr, "hostmm-peek: bad marker\n");
			return 2;
		}
		for (int i = 4; i < argc; i++) {
			pid = parse(argv[i]);
			if (vm_rw(pid, addr, buf, len, 0) == (ssize_t)len &&
			    !memcmp(buf, argv[3], len))
				printf("%d\n", pid);
		}
		return 0;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: hostmm-peek find ADDR MARKER PID... | vm-read|vm-write|mem-write PID ADDR\n");
		return 2;
	}
	pid = parse(argv[2]);
	addr = parse(argv[3]);
	if (!strcmp(argv[1], "vm-read")) {
		report(vm_rw(pid, addr, buf, 1, 0));
	} else if (!strcmp(argv[1], "vm-write")) {
		report(vm_rw(pid, addr, scribble, sizeof(scribble), 1));
	} else if (!strcmp(argv[1], "mem-write")) {
		char path[64];
		int fd;

		snprintf(path, sizeof(path), "/proc/%d/mem", pid);
		fd = open(path, O_RDWR);
		if (fd < 0) {
			printf("open %s: %s\n", path, strerrorname_np(errno) ?: "unknown errno");
			return 0;
		}
		report(pwrite(fd, scribble, sizeof(scribble), addr));
		close(fd);
	} else {
		fprintf(stderr, "hostmm-peek: unknown command %s\n", argv[1]);
		return 2;
	}
	return 0;
}
