#!/usr/bin/env python3
"""bench/cputime.py: run one command and print its CPU seconds (user +
system, from wait4, microsecond resolution), wall seconds and peak RSS in
KiB on one line, appended to FILE.

    python3 -S bench/cputime.py FILE 'COMMAND WITH ARGS'

The command line is split as a shell would (shlex) and executed directly,
with no shell in between whose start-up would count; its standard output
goes to /dev/null, its standard error to FILE.err. /usr/bin/time, used
before, prints CPU seconds in hundredths: too coarse for processes of
40 ms.

The command is started by posix_spawn (glibc: a vfork-style clone that
shares this interpreter's memory until the exec), not by fork and exec:
a forked child is charged, in its wait4 times, with copying this
interpreter's page tables, the faults of its copy-on-write pages until
the exec and the exec's tearing down of that copy, about 2 ms of CPU
that are Python's, not the command's (docs/performance.md, session 11).
What is counted is the command's process from its execve to its exit.

Peak RSS: the kernel counts, in the child's maximum, the address space it
had before its execve, here this interpreter's (shared by the vfork), at
its own peak. That peak is reset first (/proc/self/clear_refs, 5), and
python3 -S (no site module) keeps it small: the floor is the
interpreter's resident set at the spawn, 9.6 MiB (10 MiB with fork); the
peak of a command using less is that floor ('/usr/bin/time -f %M' gives
the command's own: 'iotap usb read' of km40, 13.1 MiB).
"""
import os
import shlex
import sys
import time

out, cmd = sys.argv[1], shlex.split(sys.argv[2])
null = os.open(os.devnull, os.O_WRONLY)
err = os.open(out + ".err", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
try:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
except OSError:
    pass
t0 = time.monotonic()
pid = os.posix_spawnp(cmd[0], cmd, os.environ,
                      file_actions=[(os.POSIX_SPAWN_DUP2, null, 1), (os.POSIX_SPAWN_DUP2, err, 2)])
_, status, ru = os.wait4(pid, 0)
wall = time.monotonic() - t0
with open(out, "a") as f:
    f.write("%.6f %.6f %d\n" % (ru.ru_utime + ru.ru_stime, wall, ru.ru_maxrss))
