#!/usr/bin/env python3
"""mask.py -- masks times, percentages and thread ids in 'capprof tree' and
'capprof report' output so it can be compared with a golden file. A time's
'~' (mostly probe cost) is part of the time, and the legend line for it is
left out, as is report's note on a run that was mostly probe cost ("probe
cost: ..." and its indented lines): all depend on the run's timing."""
import re
import sys

TIME = re.compile(r"~?\d+(?:\.\d+)? (?:ns|us|ms|s)\b")
PCT = re.compile(r"-?\d+\.\d%")
in_note = False
for line in sys.stdin:
    line = line.rstrip("\n")
    if line.startswith("~ mostly probe cost"):
        continue
    if line.startswith("probe cost: ") or (in_note and re.match(r"  [A-Za-z]", line)):
        in_note = True
        continue
    in_note = False
    line = re.sub(r"^thread \d+", "thread TID", line)
    # keep the column layout: replace each field by a marker of equal width
    line = TIME.sub(lambda m: "T".rjust(len(m.group(0))), line)
    line = PCT.sub(lambda m: "P".rjust(len(m.group(0))), line)
    print(re.sub(r"[ ]+(?=[TP]\b)", " ", line).rstrip())
