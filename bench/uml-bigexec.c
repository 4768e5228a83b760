// SPDX-License-Identifier: GPL-2.0
/*
 * UML workload: a static program with a 16 MiB data segment, which reads
 * one byte of each of its data pages and exits.  Exec'd in a loop by
 * bench/uml-workload (bigexec): each exec maps a big program, each read
 * faults a page of it in (UML maps it into the host process), and the
 * exit tears it all down.
 */
#define DATA_MIB 16

/* initialised, so that it is file-backed data, not bss */
static volatile char data[DATA_MIB << 20] = { 1 };

int main(void)
{
	long sum = 0;

	for (unsigned long i = 0; i < sizeof(data); i += 4096)
		sum += data[i];
	return sum != 1;
}
