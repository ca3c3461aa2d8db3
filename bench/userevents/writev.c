/*
 * writev.c: the C reference for iotap's user_events write benchmark.
 *
 * Registers "iotap_bench u32 a; u64 b" on user_events_data and times N
 * writev(2) calls of (write_index, 12-byte payload), the same system call
 * Event.Write issues, after N/100 untimed warm-up writes. The event must
 * already be enabled by a tracer (the Go benchmark harness enables it in a
 * tracefs instance), otherwise the kernel refuses the writes with EBADF.
 *
 * usage: writev USER_EVENTS_DATA ITERATIONS [writev|pwritev|pwrite] [THREADS]
 *   pwritev   issue pwritev(2) at offset 0 instead of writev(2)
 *   pwrite    issue pwrite(2) at offset 0 of one buffer holding the index
 *             and the payload (no iovec, no f_pos mutex)
 *   THREADS   start THREADS-1 idle threads first (default 1: single
 *             threaded). The kernel takes a file reference and the file's
 *             f_pos mutex on every writev(2) of a multi-threaded process,
 *             as every Go program is; a single-threaded one skips both.
 * prints: "c_writev_ns_per_op WALL THREAD_CPU" (nanoseconds per write, wall
 * clock and CPU time of the writing thread)
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* struct user_reg of include/uapi/linux/user_events.h (28 bytes, packed). */
struct ue_reg {
	uint32_t size;
	uint8_t enable_bit;
	uint8_t enable_size;
	uint16_t flags;
	uint64_t enable_addr;
	uint64_t name_args;
	uint32_t write_index;
} __attribute__((packed));

#define UE_IOCSREG _IOWR('*', 0, struct ue_reg *)

static volatile uint32_t enabled;

static void *idle(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static double now_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 5) {
		fprintf(stderr, "usage: %s USER_EVENTS_DATA ITERATIONS [writev|pwritev] [THREADS]\n", argv[0]);
		return 2;
	}
	long n = atol(argv[2]);
	int pw = argc > 3 && strcmp(argv[3], "pwritev") == 0;
	int p1 = argc > 3 && strcmp(argv[3], "pwrite") == 0;
	int threads = argc > 4 ? atoi(argv[4]) : 1;
	if (n <= 0 || threads < 1 || (argc > 3 && !pw && !p1 && strcmp(argv[3], "writev") != 0)) {
		fprintf(stderr, "%s: bad arguments\n", argv[0]);
		return 2;
	}
	for (int t = 1; t < threads; t++) {
		pthread_t th;
		if (pthread_create(&th, NULL, idle, NULL) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	}
	int fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		perror("open");
		return 1;
	}
	const char *cmd = "iotap_bench u32 a; u64 b";
	struct ue_reg reg;
	memset(&reg, 0, sizeof(reg));
	reg.size = sizeof(reg);
	reg.enable_size = 4;
	reg.enable_addr = (uint64_t)(uintptr_t)&enabled;
	reg.name_args = (uint64_t)(uintptr_t)cmd;
	if (ioctl(fd, UE_IOCSREG, &reg) < 0) {
		perror("DIAG_IOCSREG");
		return 1;
	}
	if (!enabled) {
		fprintf(stderr, "iotap_bench is not enabled\n");
		return 2;
	}
	uint32_t idx = reg.write_index;
	struct {
		uint32_t a;
		uint64_t b;
	} __attribute__((packed)) payload = {1, 2};
	struct iovec io[2] = {
		{.iov_base = &idx, .iov_len = sizeof(idx)},
		{.iov_base = &payload, .iov_len = sizeof(payload)},
	};
	for (long i = 0; !p1 && i < n / 100; i++) { /* warm-up */
		if ((pw ? pwritev(fd, io, 2, 0) : writev(fd, io, 2)) < 0) {
			fprintf(stderr, "%s: %s\n", pw ? "pwritev" : "writev", strerror(errno));
			return 1;
		}
	}
	struct {
		uint32_t idx, a;
		uint64_t b;
	} __attribute__((packed)) one = {idx, 1, 2};
	for (long i = 0; p1 && i < n / 100; i++) { /* warm-up */
		if (pwrite(fd, &one, sizeof(one), 0) < 0) {
			fprintf(stderr, "pwrite: %s\n", strerror(errno));
			return 1;
		}
	}
	double t0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	if (p1) {
		for (long i = 0; i < n; i++) {
			one.a = (uint32_t)i;
			one.b = (uint64_t)i;
			if (pwrite(fd, &one, sizeof(one), 0) < 0) {
				fprintf(stderr, "pwrite: %s\n", strerror(errno));
				return 1;
			}
		}
	} else if (pw) {
		for (long i = 0; i < n; i++) {
			payload.a = (uint32_t)i;
			payload.b = (uint64_t)i;
			if (pwritev(fd, io, 2, 0) < 0) {
				fprintf(stderr, "pwritev: %s\n", strerror(errno));
				return 1;
			}
		}
	} else {
		for (long i = 0; i < n; i++) {
			payload.a = (uint32_t)i;
			payload.b = (uint64_t)i;
			if (writev(fd, io, 2) < 0) {
				fprintf(stderr, "writev: %s\n", strerror(errno));
				return 1;
			}
		}
	}
	double c1 = now_ns(CLOCK_THREAD_CPUTIME_ID), t1 = now_ns(CLOCK_MONOTONIC);
	printf("c_writev_ns_per_op %.1f %.1f\n", (t1 - t0) / n, (c1 - c0) / n);
	return 0;
}
