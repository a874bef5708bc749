# tfrc_friendliness.tcl - one TFRC and one TCP NewReno flow through a DropTail bottleneck
# (ns-2.35), the ns-2 side of tpsim's TCP-friendliness check
# (crates/tpsim-engine/tests/rate_based.rs, docs/models.md "TFRC").
#
#   ns tfrc_friendliness.tcl <seed> <tcp start offset, s> [<queue limit, packets>]
#
# Two senders, each on its own 100 Mbit/s 1 ms access link to a router; the router reaches the
# receiver over 1.5 Mbit/s, 50 ms, DropTail with an 18-packet queue (one bandwidth-delay
# product of 1000-byte packets at the 104 ms base RTT). TFRC (Agent/TFRC, 1000-byte packets,
# its defaults otherwise) starts at 0 s and sends without pause; TCP NewReno (1000-byte
# packets, window_ raised to 10000 so that only the network limits it, Agent/TCPSink) starts
# 10 s + offset later with an FTP source. Prints, per flow, the packets that left the
# bottleneck between 100 s and 300 s and their rate in packets/s, and the drops there.
set seed [lindex $argv 0]
set offset [lindex $argv 1]
set qlim 18
if {[llength $argv] > 2} { set qlim [lindex $argv 2] }
set ns [new Simulator]
ns-random $seed
set s1 [$ns node]
set s2 [$ns node]
set r [$ns node]
set d [$ns node]
$ns duplex-link $s1 $r 100Mb 1ms DropTail
$ns duplex-link $s2 $r 100Mb 1ms DropTail
$ns duplex-link $r $d 1.5Mb 50ms DropTail
$ns queue-limit $r $d $qlim

set tfrc [new Agent/TFRC]
$tfrc set fid_ 1
$tfrc set packetSize_ 1000
set tfrcsink [new Agent/TFRCSink]
$ns attach-agent $s1 $tfrc
$ns attach-agent $d $tfrcsink
$ns connect $tfrc $tfrcsink

set tcp [new Agent/TCP/Newreno]
$tcp set fid_ 2
$tcp set packetSize_ 1000
$tcp set window_ 10000
set sink [new Agent/TCPSink]
$ns attach-agent $s2 $tcp
$ns attach-agent $d $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]
$ftp attach-agent $tcp

set fmon [$ns makeflowmon Fid]
$ns attach-fmon [$ns link $r $d] $fmon
array set pkts0 {1 0 2 0}
array set drops0 {1 0 2 0}

proc counts {} {
    global fmon
    set out {}
    foreach f [$fmon flows] {
        lappend out [$f set flowid_] [$f set pdepartures_] [$f set pdrops_]
    }
    return $out
}
proc window_start {} {
    global pkts0 drops0
    foreach {id p dr} [counts] { set pkts0($id) $p; set drops0($id) $dr }
}
proc finish {} {
    global pkts0 drops0
    foreach {id p dr} [counts] {
        set n [expr {$p - $pkts0($id)}]
        set name [expr {$id == 1 ? "tfrc" : "tcp"}]
        puts [format "%s packets %d rate_pps %.3f drops %d" $name $n [expr {$n / 200.0}] \
                  [expr {$dr - $drops0($id)}]]
    }
    exit 0
}
$ns at 0.0 "$tfrc start"
$ns at [expr {10.0 + $offset}] "$ftp start"
$ns at 100.0 "window_start"
$ns at 300.0 "finish"
$ns run
