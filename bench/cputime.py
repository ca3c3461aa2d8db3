#!/usr/bin/env python3
"""bench/cputime.py: run one command and print its CPU seconds (user +
system, from wait4, microsecond resolution), wall seconds and peak RSS in
KiB on one line, appended to FILE.

    python3 bench/cputime.py FILE 'COMMAND WITH ARGS'

The command line is split as a shell would (shlex) and executed directly,
with no shell in between whose start-up would count; its standard output
goes to /dev/null, its standard error to FILE.err. /usr/bin/time, used
before, prints CPU seconds in hundredths: too coarse for processes of
40 ms.
"""
import os
import shlex
import sys
import time

out, cmd = sys.argv[1], shlex.split(sys.argv[2])
t0 = time.monotonic()
pid = os.fork()
if pid == 0:
    null = os.open(os.devnull, os.O_WRONLY)
    err = os.open(out + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(null, 1)
    os.dup2(err, 2)
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - t0
with open(out, "a") as f:
    f.write("%.6f %.6f %d\n" % (ru.ru_utime + ru.ru_stime, wall, ru.ru_maxrss))
