# The classic CMU MANET setting of ns-2.35's wireless examples, on an ns-2 movement file and a
# cbrgen traffic file: AODV, 802.11 (ns-2 defaults: 1 Mbit/s, RTS/CTS for every unicast),
# Two-Ray Ground, Queue/DropTail/PriQueue 50, a flat grid of the movement file's size. Prints
# writes the agent-layer trace (old wireless format) to TRACE; `agt_count.py TRACE` counts the CBR
# packets sent and received. Used to measure ns-2's PDR for tpsim's test of `tpsim import-ns2`:
#   ns cmu_samples.tcl MOVEMENT TRAFFIC NODES X Y DURATION SEED TRACE
set movement [lindex $argv 0]
set traffic [lindex $argv 1]
set nn [lindex $argv 2]
set x [lindex $argv 3]
set y [lindex $argv 4]
set duration [lindex $argv 5]
set seed [lindex $argv 6]
set trace [lindex $argv 7]

set ns_ [new Simulator]
$defaultRNG seed $seed
ns-random $seed
set tracefd [open $trace w]
$ns_ trace-all $tracefd
set topo [new Topography]
$topo load_flatgrid $x $y
create-god $nn
set chan [new Channel/WirelessChannel]
$ns_ node-config -adhocRouting AODV -llType LL -macType Mac/802_11 \
	-ifqType Queue/DropTail/PriQueue -ifqLen 50 -antType Antenna/OmniAntenna \
	-propType Propagation/TwoRayGround -phyType Phy/WirelessPhy -channel $chan \
	-topoInstance $topo -agentTrace ON -routerTrace OFF -macTrace OFF -movementTrace OFF
for {set i 0} {$i < $nn} {incr i} {
	set node_($i) [$ns_ node]
	$node_($i) random-motion 0
}
source $movement
source $traffic
$ns_ at $duration "$ns_ halt"
$ns_ run
close $tracefd
