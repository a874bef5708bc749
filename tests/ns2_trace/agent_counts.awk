# Counts the data packets of an ns-2 old-format (CMU) wireless trace the way ns-2 users do:
# sent by a source agent, received by a sink agent, dropped at any layer, for packets of
# type `type` (awk -v type=cbr). Prints one "name value" line per count.
$1 == "s" && $4 == "AGT" && $7 == type { sent++ }
$1 == "r" && $4 == "AGT" && $7 == type { recv++ }
$1 == "D" && $7 == type { drop++; why[$5]++ }
END {
    printf "sent %d\nrecv %d\ndrop %d\n", sent, recv, drop
    for (w in why) printf "drop_%s %d\n", w, why[w]
}
