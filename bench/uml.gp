# SPDX-License-Identifier: GPL-2.0
# UML plot of `make bench`:
#   gnuplot -e "dir='OUTDIR'; tag='main'; run='1'" bench/uml.gp
# reads OUTDIR/uml-TAG-MODE.dat (seconds; host VMAs of all guest processes,
# of the largest one, of the UML kernel) and uml-TAG-phases-MODE.dat (where
# each workload starts), both from bench/report, and writes
# OUTDIR/uml-TAG.svg.
if (!exists("dir")) dir = "."
if (!exists("tag")) tag = "main"
if (!exists("run")) run = "1"
f(m) = sprintf("%s/uml-%s-%s.dat", dir, tag, m)
p(m) = sprintf("%s/uml-%s-phases-%s.dat", dir, tag, m)
set terminal svg size 900,560 dynamic enhanced font "sans,12" background "white"
set output sprintf("%s/uml-%s.svg", dir, tag)
set title sprintf("Host VMAs of UML's host processes over time (run %s of each mode, sampled about every 0.5 s)", run)
set logscale y
set grid xtics ytics lc rgb "#dddddd"
set key top left Left reverse box opaque samplen 3 font ",10" maxrows 3
set xlabel "seconds since run-uml started (UML boot included)"
set ylabel "host VMAs (lines of /proc/PID/maps)"
set yrange [1:1e7]	# room for the key above the data
plot f("permap") u 1:2 w steps lw 2 lc rgb "#c0392b" t "per-page (permap): all guest processes", \
     f("permap") u 1:3 w steps lw 1 dt 2 lc rgb "#c0392b" t "per-page: the largest guest process", \
     f("permap") u 1:4 w steps lw 1 dt 3 lc rgb "#e6a09a" t "per-page: the UML kernel", \
     f("collapsed") u 1:2 w steps lw 2 lc rgb "#1f6fb2" t "collapsed: all guest processes", \
     f("collapsed") u 1:3 w steps lw 1 dt 2 lc rgb "#1f6fb2" t "collapsed: the largest guest process", \
     f("collapsed") u 1:4 w steps lw 1 dt 3 lc rgb "#8fb7d8" t "collapsed: the UML kernel", \
     p("permap") u 1:2:3 w labels left offset 0.3,0.8 rotate by 30 tc rgb "#c0392b" font ",10" notitle, \
     p("collapsed") u 1:2:3 w labels left offset 0.3,-0.8 rotate by -30 tc rgb "#1f6fb2" font ",10" notitle
