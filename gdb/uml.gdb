# gdb settings for the UML kernel (run-uml -g, qemu/gdb-uml).  UML is a host
# process: its interrupts, timers and page faults arrive as host signals,
# which gdb must hand on without stopping.  Breakpoints stop it as usual.
set pagination off
set confirm off
# page faults of UML's processes (relayed through ptrace) and of UML itself
handle SIGSEGV pass nostop noprint
# the timer tick, I/O readiness, the console and the helper threads
handle SIGALRM pass nostop noprint
handle SIGVTALRM pass nostop noprint
handle SIGIO pass nostop noprint
handle SIGWINCH pass nostop noprint
handle SIGUSR1 pass nostop noprint
handle SIGUSR2 pass nostop noprint
handle SIGCHLD pass nostop noprint
handle SIGPIPE pass nostop noprint
# UML starts its process stubs with fork: stay with the kernel
set follow-fork-mode parent
set detach-on-fork on
# the kernel's own gdb scripts (lx-ps, lx-dmesg, ...) and mp-vma/mp-page
source /uml/vmlinux-gdb.py
source /usr/local/share/manyprots/gdb/manyprots.py
