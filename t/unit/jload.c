/* jload: test driver for jl_loadb of lib/jload.
 *
 *	jload [any] [nul] [nested]
 *
 * Reads JSON lines from stdin and loads each with jl_loadb and with
 * json_loadb under the flags named (JSON_DECODE_ANY, JSON_ALLOW_NUL);
 * prints per line
 *
 *	built VALUE        jl_loadb built it from jscan's tokens
 *	jansson VALUE      jl_loadb handed it to json_loadb
 *	error L:C@P TEXT   no value: the error's line, column, position
 *
 * VALUE is the value written compact. When the two results differ in
 * any way (value, key order, error fields, or the error record of a
 * success), the line ends " MISMATCH" and the exit status is 1.
 *
 * nested: jl_loadb_skip instead, leaving nothing out, with a skip
 * function that reads a JSON text of its own with jl_loadb at every
 * object (as one that looked things up could): the outer read must come
 * out the same, and each inner one must be right ("NESTED" ends the line
 * when one was not). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "err.h"
#include "jload.h"

static int
same_error(const json_error_t *a, const json_error_t *b)
{
	return a->line == b->line && a->column == b->column &&
		a->position == b->position && !strcmp(a->text, b->text) &&
		!strcmp(a->source, b->source);
}

static char *
dump(const json_t *v)
{
	return json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
}

static int nested_bad;

/* inner reads a text of its own, while the outer read is under way. */
static const char *const *
inner(const char *const *path, int depth, int *keep, void *arg)
{
	static const char text[] = "{\"inner\":[1,\"two\",{\"x\":null}]}";
	json_t *v = jl_loadb(text, sizeof text - 1, 0, NULL);
	char *d = v ? dump(v) : NULL;

	(void)path, (void)depth, (void)keep, (void)arg;
	nested_bad |= !d || strcmp(d, text);
	free(d);
	json_decref(v);
	return NULL;
}

int
main(int argc, char **argv)
{
	char *line = NULL, *a, *b;
	size_t cap = 0, flags = 0;
	ssize_t len;
	json_error_t ea, eb;
	json_t *va, *vb;
	unsigned long was;
	int i, status = 0, same, nested = 0;

	err_init(argv[0]);
	for (i = 1; i < argc; i++) {
		flags |= !strcmp(argv[i], "any")  ? JSON_DECODE_ANY
			: !strcmp(argv[i], "nul") ? JSON_ALLOW_NUL
						  : 0;
		nested |= !strcmp(argv[i], "nested");
	}
	while ((len = getline(&line, &cap, stdin)) > 0) {
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		was = jl_handed_over();
		memset(&ea, 'x', sizeof ea);
		memset(&eb, 'y', sizeof eb);
		nested_bad = 0;
		va = nested ? jl_loadb_skip(line, (size_t)len, flags, &ea,
				      inner, NULL)
			    : jl_loadb(line, (size_t)len, flags, &ea);
		vb = json_loadb(line, (size_t)len, flags, &eb);
		same = same_error(&ea, &eb) && !va == !vb;
		if (va) {
			a = dump(va);
			b = vb ? dump(vb) : NULL;
			same = same && b && !strcmp(a, b) && json_equal(va, vb);
			printf("%s %s",
				jl_handed_over() == was ? "built" : "jansson",
				a);
			free(a);
			free(b);
		} else {
			printf("error %d:%d@%d %s", ea.line, ea.column,
				ea.position, ea.text);
		}
		puts(!same ? " MISMATCH" : nested_bad ? " NESTED" : "");
		status |= !same || nested_bad;
		json_decref(va);
		json_decref(vb);
	}
	free(line);
	return status;
}
