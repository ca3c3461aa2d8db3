/* Test program of the PT call reconstruction (intelpt/ptsynth):
 * a few hundred calls, recursion, indirect calls through a function
 * pointer, a tail call, a callback from libc (qsort), libc string
 * functions (their AVX2/EVEX variants), a longjmp out of a recursion, and
 * a system call. Built at test time with gcc -fPIE -pie (see ptsynth).
 * The expected call counts are in ptsynth's tests; keep them in step. */
#include <time.h>
#include <setjmp.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static jmp_buf env;

__attribute__((noinline)) int fib(int n) {
	if (n < 2)
		return n;
	int a = fib(n - 1);
	int b = fib(n - 2);
	__asm__ volatile("" ::: "memory"); /* keeps fib(n - 2) a real call */
	return a + b;
}

__attribute__((noinline)) int square(int x) { return x * x; }

__attribute__((noinline)) int twice(int x) { return 2 * x; }

/* A tail call: compiled to "jmp twice" (-foptimize-sibling-calls). */
__attribute__((noinline)) int twice_plus_one(int x) { return twice(x + 1); }

int (*volatile ops[3])(int) = {square, twice, twice_plus_one};

__attribute__((noinline)) void deep(int n) {
	if (n == 0)
		longjmp(env, 1);
	deep(n - 1);
	__asm__ volatile("" ::: "memory"); /* not a tail call */
}

__attribute__((noinline)) int cmp(const void *a, const void *b) {
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv) {
	(void)argv;
	volatile int sum = 0;
	sum += fib(10); /* 177 calls of fib */
	for (int i = 0; i < 30; i++)
		sum += ops[(i + argc - 1) % 3](i); /* 10 each, indirect */
	if (setjmp(env) == 0)
		deep(5); /* 6 calls of deep, then longjmp back here */
	int a[16];
	for (int i = 0; i < 16; i++)
		a[i] = (i * 7919) % 31;
	qsort(a, 16, sizeof a[0], cmp);
	char buf[512];
	memset(buf, 'x', 300);
	buf[300] = 0;
	sum += (int)strlen(buf);
	char copy[512];
	memcpy(copy, buf, 301);
	sum += copy[299];
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts); /* runs in the vDSO */
	sum += (int)(ts.tv_nsec & 1);
	sum += (int)write(-1, copy, 1); /* a system call (fails: bad fd) */
	return sum & 0x7f;
}
