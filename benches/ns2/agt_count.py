"""Counts, from the ns-2 old wireless trace file given as the argument, the CBR packets agents sent (`s ... AGT
... cbr`) and received (`r ... AGT ... cbr`), and prints `sent=N recv=M pdr=R`."""

import sys

sent = recv = 0
for line in open(sys.argv[1]):
    f = line.split()
    if len(f) > 6 and f[3] == "AGT" and f[6] == "cbr":
        if f[0] == "s":
            sent += 1
        elif f[0] == "r":
            recv += 1
print(f"sent={sent} recv={recv} pdr={recv / sent if sent else float('nan'):.6f}")
