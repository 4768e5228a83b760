# SPDX-License-Identifier: GPL-2.0
# Host-level plots of `make bench`: gnuplot -e "dir='OUTDIR'" bench/host.gp
# reads OUTDIR/host-METRIC-WAY.dat (N median min max, from bench/report)
# and OUTDIR/host-vma_one.dat (N, one vm_area_struct + one maple_node in
# KiB, where the collapsed way's VMA slabs grew by less than that), and
# writes OUTDIR/host-{vmas,whole,memory,time,fork}.svg, log-log.
if (!exists("dir")) dir = "."
f(m, w) = sprintf("%s/host-%s-%s.dat", dir, m, w)
set terminal svg size 860,560 dynamic enhanced font "sans,12" background "white"
set logscale xy
set grid xtics ytics lc rgb "#dddddd"
set key top left Left reverse box opaque samplen 3 font ",10"
set xlabel "N (single-page mappings)"
set format x "%.0s%c"
set xrange [600:*]
set pointsize 0.8
pp = "lw 2 dt 2 pt 6"
co = "lw 2 dt 1 pt 7"
limit = real(system(sprintf("cat %s/host-limit.dat", dir)))

set output dir."/host-vmas.svg"
set key center right
set title "VMAs in the range (median, min-max bars)"
set ylabel "VMAs"
set arrow 1 from graph 0, first limit to graph 1, first limit nohead lc rgb "#aa0000" dt 3
set label 1 sprintf("default vm.max_map_count (%d): the per-page way needs it raised above", limit) \
	at graph 0.02, first limit * 1.6 tc rgb "#aa0000" noenhanced
set yrange [0.5:*]
plot f("vmas","perpage") u 1:2:3:4 w yerrorlines @pp lc rgb "#c0392b" t "per-page: one mmap() per page", \
     f("vmas","collapsed") u 1:2:3:4 w yerrorlines @co lc rgb "#1f6fb2" t "collapsed: one VMA + MAP\\_CHGPROT"
unset arrow 1
unset label 1
set yrange [*:*]

set output dir."/host-memory.svg"
set key top left
set yrange [0.1:1e8]	# room for the key above the data
set title "Kernel memory after set-up (median, min-max bars)"
set ylabel "KiB"
plot f("vma_mem","perpage") u 1:2:3:4 w yerrorlines @pp lc rgb "#c0392b" t "per-page: VMA slabs (vm\\_area\\_struct + maple\\_node)", \
     f("vma_mem","collapsed") u 1:2:3:4 w yerrorlines @co lc rgb "#1f6fb2" t "collapsed: VMA slabs", \
     dir."/host-vma_one.dat" u 1:2 w lines lw 2 dt 3 lc rgb "#1f6fb2" t "collapsed: VMA slabs grew less than one object (drawn at one vm\\_area\\_struct + maple\\_node)", \
     f("rindex","collapsed") u 1:2:3:4 w yerrorlines @co lc rgb "#27ae60" t "collapsed: reverse index (manyprots\\_rmap\\_chunk + xarray nodes)", \
     f("pte","perpage") u 1:2:3:4 w yerrorlines @pp lc rgb "#999999" t "per-page: page tables after fault-in", \
     f("pte","collapsed") u 1:2:3:4 w yerrorlines @co lc rgb "#555555" t "collapsed: page tables after fault-in"

set output dir."/host-whole.svg"
set title "Kernel memory counted whole: VMA slabs + reverse index + page tables (median, min-max bars)"
plot f("whole_setup","perpage") u 1:2:3:4 w yerrorlines @pp lc rgb "#c0392b" t "per-page, after set-up", \
     f("whole","perpage") u 1:2:3:4 w yerrorlines @pp lc rgb "#e67e22" t "per-page, after fault-in", \
     f("whole_setup","collapsed") u 1:2:3:4 w yerrorlines @co lc rgb "#1f6fb2" t "collapsed, after set-up (a SWP\\_FILE entry per page)", \
     f("whole","collapsed") u 1:2:3:4 w yerrorlines @co lc rgb "#16a085" t "collapsed, after fault-in"

set yrange [*:*]
set output dir."/host-time.svg"
set title "Time per page (median, min-max bars; relative only under TCG)"
set ylabel "µs per page"
plot f("setup","perpage") u 1:2:3:4 w yerrorlines @pp lc rgb "#c0392b" t "set-up, per-page (mmap)", \
     f("setup","collapsed") u 1:2:3:4 w yerrorlines @co lc rgb "#c0392b" t "set-up, collapsed (MAP\\_CHGPROT)", \
     f("fault","perpage") u 1:2:3:4 w yerrorlines @pp lc rgb "#1f6fb2" t "fault-in, per-page", \
     f("fault","collapsed") u 1:2:3:4 w yerrorlines @co lc rgb "#1f6fb2" t "fault-in, collapsed", \
     f("prot","perpage") u 1:2:3:4 w yerrorlines @pp lc rgb "#27ae60" t "protection change, per-page (mprotect)", \
     f("prot","collapsed") u 1:2:3:4 w yerrorlines @co lc rgb "#27ae60" t "protection change, collapsed (MAP\\_CHGPROT)"

set output dir."/host-fork.svg"
set title "fork()+exit+wait and teardown (munmap), whole range (median, min-max bars)"
set ylabel "ms"
plot f("fork","perpage") u 1:2:3:4 w yerrorlines @pp lc rgb "#8e44ad" t "fork, per-page", \
     f("fork","collapsed") u 1:2:3:4 w yerrorlines @co lc rgb "#8e44ad" t "fork, collapsed", \
     f("teardown","perpage") u 1:2:3:4 w yerrorlines @pp lc rgb "#d35400" t "teardown, per-page", \
     f("teardown","collapsed") u 1:2:3:4 w yerrorlines @co lc rgb "#d35400" t "teardown, collapsed"
