# One-way delay of every data packet of type `type` (awk -v type=cbr) in an ns-2 wired
# trace: from its first enqueue at its source node ($3 is the node of src.port, $9) to its
# arrival at its destination node ($4 is the node of dst.port, $10), matched by packet id
# ($12). Prints "id delay" per packet received, then "mean", "max" and "n".
$5 != type { next }
$1 == "+" && $3 == int($9) && !($12 in sent) { sent[$12] = $2 }
$1 == "r" && $4 == int($10) && ($12 in sent) && !($12 in done) {
    d = $2 - sent[$12]; done[$12] = 1
    printf "%s %.9f\n", $12, d
    sum += d; n++
    if (n == 1 || d > max) max = d
}
END { printf "mean %.9f\nmax %.9f\nn %d\n", (n ? sum / n : 0), max, n }
