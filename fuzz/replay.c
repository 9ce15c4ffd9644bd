/* Replays files through a fuzz target without libFuzzer, so the targets
 * also build with gcc (plain and with ASan) for `make test`: each file
 * named is fed once to LLVMFuzzerTestOneInput, a directory's files in
 * turn. Prints a line per input with -v; exits 0 when every input ran
 * (a failed check aborts, a sanitizer reports and exits). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int verbose;

/* Reads path whole into a malloc'd buffer; -1 when it cannot. */
static int slurp(const char *path, uint8_t **out, size_t *len)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 4096, n = 0, got;
	uint8_t *buf = malloc(cap), *q;

	if (f == NULL || buf == NULL)
		goto fail;
	while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			if ((q = realloc(buf, cap * 2)) == NULL)
				goto fail;
			buf = q;
			cap *= 2;
		}
	}
	if (ferror(f))
		goto fail;
	fclose(f);
	*out = buf;
	*len = n;
	return 0;
fail:
	if (f)
		fclose(f);
	free(buf);
	return -1;
}

static int run_file(const char *path)
{
	uint8_t *data;
	size_t len;

	if (slurp(path, &data, &len)) {
		fprintf(stderr, "replay: %s: cannot read\n", path);
		return -1;
	}
	if (verbose)
		fprintf(stderr, "replay: %s (%zu bytes)\n", path, len);
	LLVMFuzzerTestOneInput(data, len);
	free(data);
	return 0;
}

/* Every regular file of a directory, in name order; returns how many. */
static int run_dir(const char *dir, int *failed)
{
	struct dirent **names;
	int n = scandir(dir, &names, NULL, alphasort), count = 0;

	if (n < 0) {
		fprintf(stderr, "replay: %s: cannot list\n", dir);
		++*failed;
		return 0;
	}
	for (int i = 0; i < n; i++) {
		char path[4096];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (names[i]->d_name[0] != '.' && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			*failed += run_file(path) != 0;
			count++;
		}
		free(names[i]);
	}
	free(names);
	return count;
}

int main(int argc, char **argv)
{
	int failed = 0, count = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (strcmp(argv[i], "-v") == 0) {
			verbose = 1;
		} else if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			count += run_dir(argv[i], &failed);
		} else {
			failed += run_file(argv[i]) != 0;
			count++;
		}
	}
	printf("replayed %d inputs\n", count);
	return failed ? 1 : 0;
}
