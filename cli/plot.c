/* Plots through gnuplot (compare --plot, show --plot): the script goes
 * down a pipe, the picture into a temporary file renamed on success. */
#include "cli.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int cli_plot_name(const char *cmd, const char *path)
{
	const char *dot = strrchr(path, '.');

	if (dot == NULL || (strcmp(dot, ".svg") != 0 && strcmp(dot, ".png") != 0))
		return cli_usage(cmd, "--plot: the file name must end in .svg or .png");
	return 0;
}

int cli_plot_writable(const char *path)
{
	struct out probe;
	struct cm_error err;

	if (out_open(&probe, path, &err))
		return cli_error("%s", err.msg);
	out_abort(&probe);
	return 0;
}

void cli_plot_string(FILE *gp, const char *s)
{
	fputc('\'', gp);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', gp); /* '' is a quote inside '...' */
		if (*s != '\n' && *s != '\r')
			fputc(*s, gp);
	}
	fputc('\'', gp);
}

/* A temporary file beside path, with the permissions a new file gets:
 * its malloc'd name, or NULL. */
static char *plot_tempfile(const char *path)
{
	char *tmp = malloc(strlen(path) + 16);
	mode_t mask = umask(0);
	int fd;

	umask(mask);
	if (tmp == NULL)
		return NULL;
	sprintf(tmp, "%s.tmp.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		free(tmp);
		return NULL;
	}
	out_track_temp(tmp); /* a second SIGINT removes it */
	fchmod(fd, 0666 & ~mask);
	close(fd);
	return tmp;
}

/* The terminal and output lines, then the caller's script. */
static void plot_preamble(FILE *gp, const char *tmp, int svg, int width, int height)
{
	fprintf(gp, "set terminal %s size %d,%d background rgb 'white'\nset output ",
		svg ? "svg dynamic enhanced" : "pngcairo", width, height);
	cli_plot_string(gp, tmp);
	fputc('\n', gp);
}

int cli_plot(const char *path, int width, int height,
	     void (*script)(FILE *gp, void *ctx), void *ctx)
{
	char *tmp = plot_tempfile(path);
	void (*old_pipe)(int);
	FILE *gp;
	int status = -1;

	if (tmp == NULL)
		return cli_error("%s: cannot create", path);
	/* When gnuplot is missing, the shell exits before reading: writes
	 * must fail with EPIPE rather than kill us. */
	old_pipe = signal(SIGPIPE, SIG_IGN);
	gp = popen("gnuplot 2>/dev/null", "w");
	if (gp != NULL) {
		plot_preamble(gp, tmp, strcmp(strrchr(path, '.'), ".svg") == 0, width, height);
		script(gp, ctx);
		status = pclose(gp);
	}
	signal(SIGPIPE, old_pipe);
	if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
	    rename(tmp, path) == 0) {
		out_untrack_temp(tmp);
		free(tmp);
		return 0;
	}
	unlink(tmp);
	out_untrack_temp(tmp);
	free(tmp);
	if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return cli_error("--plot needs gnuplot (Debian package gnuplot-nox; "
				 "make deps installs it)");
	return cli_error("%s: gnuplot failed to draw the plot", path);
}

int cli_plot_unit(uint64_t max, double *scale, const char **unit)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	int u = 0;

	*scale = 1;
	while (u < 4 && (double)max / *scale >= 1024 * 10) {
		*scale *= 1024;
		u++;
	}
	*unit = units[u];
	return u;
}
