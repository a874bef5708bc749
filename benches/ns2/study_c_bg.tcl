# study_c_bg.tcl - the background flows that ../shared/ns2/study_c.tcl draws (ns-2.35).
#
#   ns study_c_bg.tcl seed=S [bg=8] [start=10]
#
# study_c.tcl draws its background pairs and start times from a fresh `RNG` seeded with
# the run's seed (`$rng seed $opt(seed)`): 8 times a source 1 + integer(48), a different
# destination the same way, and a start uniform in [1, start]. This script makes the same
# draws in the same order and prints one line per flow with the start time to 17
# significant digits (study_c.tcl's own output shows it to the microsecond only):
#
#   BG flow=2 src=12 dst=40 start=4.1234567890123456
#
# benches/compare_ns2.py checks these lines against the FLOW lines of the traced ns-2 run
# (same pairs, starts within 1 µs) before it uses them.

array set opt {seed 1 bg 8 start 10}
foreach a $argv {
	set kv [split $a =]
	if {[llength $kv] != 2 || ![info exists opt([lindex $kv 0])]} {
		puts stderr "usage: ns study_c_bg.tcl seed=S \[bg=8\] \[start=10\]"
		exit 2
	}
	set opt([lindex $kv 0]) [lindex $kv 1]
}
set rng [new RNG]
$rng seed $opt(seed)
for {set f 0} {$f < $opt(bg)} {incr f} {
	set s [expr {1 + [$rng integer 48]}]
	set d $s
	while {$d == $s} { set d [expr {1 + [$rng integer 48]}] }
	set st [$rng uniform 1.0 $opt(start)]
	puts [format "BG flow=%d src=%d dst=%d start=%.17g" [expr {$f + 2}] $s $d $st]
}
exit 0
