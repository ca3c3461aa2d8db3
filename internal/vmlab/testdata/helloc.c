/* A guest binary of the vmlab tests: writes its arguments to the file
 * named by its first argument, then the kernel release. */
#include <stdio.h>
#include <sys/utsname.h>

int main(int argc, char **argv)
{
	struct utsname u;
	FILE *f;
	int i;

	if (argc < 2 || uname(&u) != 0)
		return 2;
	f = fopen(argv[1], "w");
	if (!f)
		return 1;
	fputs("c", f);
	for (i = 2; i < argc; i++)
		fprintf(f, " %s", argv[i]);
	fprintf(f, "\n%s\n", u.release);
	return fclose(f) != 0;
}
