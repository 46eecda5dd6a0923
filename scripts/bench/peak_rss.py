#!/usr/bin/python3
"""Runs a command and writes the peak resident memory of it (MiB) to a file.
Usage: peak_rss.py OUT_FILE CMD [ARGS...]; exits with the command's code."""
import resource
import subprocess
import sys

rc = subprocess.call(sys.argv[2:])
with open(sys.argv[1], "w") as f:
    f.write("%.1f\n" % (resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024))
sys.exit(rc)
