#include "io.h"

#include <stdlib.h>

void plan_json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '"' || *c == '\\')
			fprintf(f, "\\%c", *c);
		else if (*c < 0x20)
			fprintf(f, "\\u%04x", *c);
		else
			fputc(*c, f);
	}
	fputc('"', f);
}

static void json_number(FILE *f, double x)
{
	fprintf(f, "%.17g", x);
}

int plan_write_json(FILE *f, const struct graph *g, const struct plan *p)
{
	fputs("{\"format\": \"checkmate-plan\", \"version\": 1, \"graph\": ", f);
	plan_json_string(f, g->id);
	fputs(", \"strategy\": ", f);
	plan_json_string(f, p->strategy);
	fputs(", \"solver\": ", f);
	if (p->solver[0])
		plan_json_string(f, p->solver);
	else
		fputs("null", f);
	if (p->param[0]) {
		fputs(", \"param\": ", f);
		plan_json_string(f, p->param);
	}
	fputs(",\n \"budget\": ", f);
	if (p->budget)
		fprintf(f, "%llu", (unsigned long long)p->budget);
	else
		fputs("null", f);
	fputs(", \"cost\": ", f);
	json_number(f, p->cost);
	fprintf(f, ", \"peak_memory\": %llu, \"status\": ", (unsigned long long)p->peak);
	plan_json_string(f, p->status);
	fputs(", \"lower_bound\": ", f);
	if (p->has_lower_bound)
		json_number(f, p->lower_bound);
	else
		fputs("null", f);
	if (p->has_time) {
		fputs(",\n \"time\": ", f);
		json_number(f, p->time);
		fputs(", \"wait\": ", f);
		json_number(f, p->wait);
		fprintf(f, ", \"host_peak_memory\": %llu", (unsigned long long)p->host_peak);
		if (p->time_bound > 0) {
			fputs(", \"time_lower_bound\": ", f);
			json_number(f, p->time_bound);
		}
	}
	fputs(",\n \"steps\": [", f);
	for (int i = 0; i < p->n; i++) {
		fputs(i ? ",\n  {\"op\": " : "\n  {\"op\": ", f);
		fprintf(f, "\"%s\"", plan_op_name(p->steps[i].op));
		fputs(", \"node\": ", f);
		plan_json_string(f, g->nodes[p->steps[i].node].name);
		fputc('}', f);
	}
	fputs("\n]}\n", f);
	return ferror(f) ? -1 : 0;
}

int plan_write_text(FILE *f, const struct graph *g, const struct plan *p)
{
	int *reg = malloc((size_t)g->n * sizeof(int));
	int next = 0, stage = -1;

	if (reg == NULL)
		return -1;
	for (int k = 0; k < g->n; k++)
		reg[k] = -1;
	fprintf(f, "# checkmate plan: graph %s, strategy %s, status %s, cost %.17g, peak_memory %llu",
		g->id, p->strategy, p->status, p->cost, (unsigned long long)p->peak);
	if (p->budget)
		fprintf(f, ", budget %llu", (unsigned long long)p->budget);
	if (p->has_time)
		fprintf(f, ", time %.17g s, wait %.17g s, host_peak_memory %llu", p->time, p->wait,
			(unsigned long long)p->host_peak);
	if (p->has_time && p->time_bound > 0)
		fprintf(f, ", time_lower_bound %.17g s", p->time_bound);
	fputc('\n', f);
	for (int i = 0; i < p->n; i++) {
		const struct plan_step *s = &p->steps[i];

		if (s->stage >= 0 && s->stage != stage) {
			stage = s->stage;
			fprintf(f, "# stage %d\n", stage + 1);
		}
		if (s->op == PLAN_COMPUTE) {
			reg[s->node] = next++;
			fprintf(f, "%%%d = compute %s\n", reg[s->node], g->nodes[s->node].name);
		} else if (s->op == PLAN_FREE) {
			fprintf(f, "deallocate %%%d\n", reg[s->node]);
		} else {
			fprintf(f, "%s %%%d\n", plan_op_name(s->op), reg[s->node]);
		}
	}
	free(reg);
	return ferror(f) ? -1 : 0;
}
