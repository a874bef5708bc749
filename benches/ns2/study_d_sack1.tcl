# study_d_sack1.tcl - study D over ns-2.35's SACK TCP (Agent/TCP/Sack1, tcp/tcp-sack1.cc).
#
#   ns study_d_sack1.tcl [sender=sack1|newreno|reno|tahoe] [sink=auto|plain|sack1]
#                        [delack=0|1] [packetsize=1000] [qlimit=50] [interval=0.02]
#                        [stop=10] [drain=1] [seed=1] [keep=FILE]
#
# The scenario is study D's (../shared/ns2/study_d.tcl): two nodes joined by a duplex link of
# 256 kbit/s and 50 ms with DropTail queues of 50 packets each way; flow 1 goes 0->1, flow 2
# 1->0, each over its own one-way TCP agent pair, fed by a CBR application of 128-byte writes
# every 20 ms from 0.1 s while start + k*interval < stop (495 writes for stop=10); the run
# ends `drain` s after `stop`. packetSize_ stays at ns-2's default 1000 (study D's
# sizes=default): each 128-byte write becomes one 1040-byte segment.
#
# Agents: sender=sack1 (default) is Agent/TCP/Sack1 with Agent/TCPSink/Sack1 (SACK blocks
# in its ACKs, maxSackBlocks_ 3); newreno/reno/tahoe are Agent/TCP/Newreno, /Reno and
# Agent/TCP with the plain Agent/TCPSink, which is what study_d.tcl transport=tcp|tcp-reno|
# tcp-tahoe runs (sink=plain|sack1 overrides the choice); delack=1 takes the sink's DelAck
# variant (Agent/TCPSink/DelAck, Agent/TCPSink/Sack1/DelAck, interval_ 100 ms). All other
# parameters are ns-default.tcl's.
#
# Measurement (the definitions of study D's tables): the whole trace goes to a temporary
# file, read back after the run. Per flow:
#   sent           data packets (type tcp, more than the 40-byte SYN) enqueued at the source
#                  node, retransmissions included (each transmission is a new packet uid)
#   recv           those packets that arrived at the destination node
#   msgs_delivered distinct sequence numbers among them
#   delay_ms       mean over the received data packets of arrival - enqueue at the source
#   acks           the sink's packets, and acks_by_size: how many had each size (an ACK is
#                  40 bytes plus 8 per SACK block, Sacker::append_ack)
#   drops          queue drops of the flow's packets (data and ACKs)
# Output: one line per flow, then a TOTAL line over both. keep=FILE keeps the trace there.

array set opt {keep "" sender sack1 sink auto delack 0 packetsize 1000 qlimit 50 rate 256Kb delay 50ms
	start 0.1 stop 10 drain 1 interval 0.02 msg 128 seed 1}
foreach a $argv {
	set kv [split $a =]
	if {[llength $kv] != 2 || ![info exists opt([lindex $kv 0])]} {
		puts stderr "bad argument '$a' (known: [lsort [array names opt]], as key=value)"
		exit 2
	}
	set opt([lindex $kv 0]) [lindex $kv 1]
}
array set senders {sack1 Agent/TCP/Sack1 newreno Agent/TCP/Newreno reno Agent/TCP/Reno
	tahoe Agent/TCP}
if {![info exists senders($opt(sender))]} {
	puts stderr "sender must be one of [lsort [array names senders]]"
	exit 2
}
set sinktype $opt(sink)
if {$sinktype eq "auto"} {
	set sinktype [expr {$opt(sender) eq "sack1" ? "sack1" : "plain"}]
}
array set sinks {plain Agent/TCPSink sack1 Agent/TCPSink/Sack1}
if {![info exists sinks($sinktype)]} {
	puts stderr "sink must be auto, plain or sack1"
	exit 2
}
if {$opt(delack)} {
	set sinks($sinktype) "$sinks($sinktype)/DelAck"
}

set ns [new Simulator]
$defaultRNG seed $opt(seed)
ns-random $opt(seed)
set tracepath $opt(keep)
if {$tracepath eq ""} {
	set tracepath [file join [expr {[info exists ::env(TMPDIR)] ? $::env(TMPDIR) : "/tmp"}] \
		"study_d_sack1.[pid].tr"]
}
set tracefd [open $tracepath w]
$ns trace-all $tracefd

set node(0) [$ns node]
set node(1) [$ns node]
$ns duplex-link $node(0) $node(1) $opt(rate) $opt(delay) DropTail
$ns queue-limit $node(0) $node(1) $opt(qlimit)
$ns queue-limit $node(1) $node(0) $opt(qlimit)

# The number of writes at start + k*interval < stop.
set nwrites [expr {int(ceil(($opt(stop) - $opt(start)) / double($opt(interval)) - 1e-9))}]
if {$nwrites < 0} { set nwrites 0 }

# flow id -> {source node, destination node, source port, destination port}
foreach {fid from to} {1 0 1 2 1 0} {
	set tcp [new $senders($opt(sender))]
	$tcp set packetSize_ $opt(packetsize)
	$tcp set fid_ $fid
	set sink [new $sinks($sinktype)]
	$sink set fid_ $fid
	$ns attach-agent $node($from) $tcp
	$ns attach-agent $node($to) $sink
	$ns connect $tcp $sink
	set cbr [new Application/Traffic/CBR]
	$cbr set packetSize_ $opt(msg)
	$cbr set interval_ $opt(interval)
	$cbr set random_ 0
	$cbr set maxpkts_ $nwrites
	$cbr attach-agent $tcp
	if {$nwrites > 0} { $ns at $opt(start) "$cbr start" }
	set flow($fid) [list $from $to [$tcp port] [$sink port]]
}

set end [expr {$opt(stop) + $opt(drain)}]
$ns at $end "$ns halt"
$ns run
$ns flush-trace
close $tracefd

# ---------------------------------------------------------------- reading the trace
# Wired trace line: event time from to type size flags fid src.port dst.port seq uid
# (In a procedure: ns-2 defines globals such as the array `ptype`.)
proc read-trace {path} {
	global flow st seqs acksizes
	foreach fid [array names flow] {
		foreach k {sent recv delay_sum acks drops} { set st($fid,$k) 0 }
		set seqs($fid) [dict create]
		set acksizes($fid) [dict create]
	}
	set fd [open $path r]
	while {[gets $fd line] >= 0} {
		set tk [split $line " "]
		set ev [lindex $tk 0]
		if {$ev ni {+ r d}} continue
		lassign [lrange $tk 1 11] t from to type size flags fid src dst seq uid
		if {![info exists flow($fid)]} continue
		lassign $flow($fid) fsrc fdst
		set data [expr {$type eq "tcp" && $size > 40}]
		set snode [lindex [split $src .] 0]
		switch -- $ev {
			+ {
				if {$from != $snode} continue
				if {$data && $snode == $fsrc} {
					incr st($fid,sent)
					set sent_at($uid) $t
				} elseif {$snode == $fdst} {
					incr st($fid,acks)
					dict incr acksizes($fid) $size
				}
			}
			r {
				if {$data && $to == $fdst && [info exists sent_at($uid)]} {
					incr st($fid,recv)
					set st($fid,delay_sum) [expr {$st($fid,delay_sum) + $t - $sent_at($uid)}]
					dict set seqs($fid) $seq 1
					unset sent_at($uid)
				}
			}
			d { incr st($fid,drops) }
		}
	}
	close $fd
}
read-trace $tracepath
if {$opt(keep) eq ""} { file delete $tracepath }

proc report {label fids} {
	global st seqs acksizes
	set sent 0; set recv 0; set dsum 0.0; set distinct 0; set acks 0; set drops 0
	set sizes [dict create]
	foreach f $fids {
		incr sent $st($f,sent)
		incr recv $st($f,recv)
		set dsum [expr {$dsum + $st($f,delay_sum)}]
		incr distinct [dict size $seqs($f)]
		incr acks $st($f,acks)
		incr drops $st($f,drops)
		dict for {sz n} $acksizes($f) { dict incr sizes $sz $n }
	}
	set delay [expr {$recv > 0 ? 1000.0 * $dsum / $recv : -1}]
	set bysize {}
	foreach sz [lsort -integer [dict keys $sizes]] { lappend bysize "$sz:[dict get $sizes $sz]" }
	puts [format "%s sent=%d recv=%d msgs_delivered=%d delay_ms=%.3f acks=%d acks_by_size=%s drops=%d" \
		$label $sent $recv $distinct $delay $acks [join $bysize ,] $drops]
}
set head "sender=$senders($opt(sender)) sink=$sinks($sinktype) packetSize_=$opt(packetsize) writes=$nwrites"
foreach fid [lsort -integer [array names flow]] {
	report "FLOW $head flow=$fid" $fid
}
report "TOTAL $head" [lsort -integer [array names flow]]
exit 0
