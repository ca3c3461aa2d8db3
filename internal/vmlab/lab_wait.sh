#!/bin/sh
# lab_wait SECONDS COMMAND [ARG...]: run COMMAND every 0.1 s until it
# succeeds; exit 1 with a message if it has not within SECONDS.
[ $# -ge 2 ] || { echo "usage: lab_wait SECONDS COMMAND [ARG...]" >&2; exit 2; }
limit=$(($1 * 10))
shift
n=0
until "$@" >/dev/null 2>&1; do
	n=$((n + 1))
	if [ "$n" -ge "$limit" ]; then
		echo "lab_wait: still failing after $((limit / 10)) s: $*" >&2
		exit 1
	fi
	usleep 100000
done
