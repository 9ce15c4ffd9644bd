/* Output files written whole or not at all: a temporary file in the target's
 * directory, renamed over the target once every write has succeeded. */
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The tracked temporary files; NULL marks a free slot. */
static const char *volatile temps[OUT_MAX_TEMPS];

void out_track_temp(const char *path)
{
	for (int i = 0; i < OUT_MAX_TEMPS; i++)
		if (temps[i] == NULL) {
			temps[i] = path;
			return;
		}
}

void out_untrack_temp(const char *path)
{
	for (int i = 0; i < OUT_MAX_TEMPS; i++)
		if (temps[i] == path)
			temps[i] = NULL;
}

void out_unlink_temps(void)
{
	for (int i = 0; i < OUT_MAX_TEMPS; i++)
		if (temps[i] != NULL)
			unlink(temps[i]);
}

int out_open(struct out *o, const char *path, struct cm_error *err)
{
	int fd;

	*o = (struct out){ 0 };
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	o->path = strdup(path);
	o->tmp = malloc(strlen(path) + 16);
	if (o->path == NULL || o->tmp == NULL) {
		out_abort(o);
		return cm_errorf(err, "out of memory");
	}
	sprintf(o->tmp, "%s.tmp.XXXXXX", path);
	fd = mkstemp(o->tmp);
	if (fd >= 0)
		out_track_temp(o->tmp);
	if (fd < 0) {
		int e = errno;

		free(o->tmp);
		o->tmp = NULL;
		out_abort(o);
		return cm_errorf(err, "%s: %s", path, strerror(e));
	}
	/* mkstemp makes the file private; give it the usual permissions. */
	{
		mode_t mask = umask(0);

		umask(mask);
		fchmod(fd, 0666 & ~mask);
	}
	o->f = fdopen(fd, "w");
	if (o->f == NULL) {
		close(fd);
		out_abort(o);
		return cm_errorf(err, "%s: %s", path, strerror(errno));
	}
	return 0;
}

int out_commit(struct out *o, struct cm_error *err)
{
	int failed;

	errno = 0;
	if (o->path == NULL) {
		if (fflush(stdout) != 0 || ferror(stdout))
			return cm_errorf(err, "standard output: %s", strerror(errno));
		return 0;
	}
	failed = ferror(o->f) != 0;
	failed |= fclose(o->f) != 0;
	o->f = NULL;
	if (failed || rename(o->tmp, o->path) != 0) {
		cm_errorf(err, "%s: %s", o->path, strerror(errno ? errno : EIO));
		out_abort(o);
		return -1;
	}
	out_untrack_temp(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	out_abort(o);
	return 0;
}

void out_abort(struct out *o)
{
	if (o->f != NULL && o->f != stdout)
		fclose(o->f);
	if (o->tmp != NULL) {
		unlink(o->tmp);
		out_untrack_temp(o->tmp);
	}
	free(o->tmp);
	free(o->path);
	*o = (struct out){ 0 };
}
