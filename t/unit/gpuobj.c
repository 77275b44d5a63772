/* unit/gpuobj: drive lib/kname and gobj_check from stdin, one request a
 * line:
 *
 *   label TEXT    -> "TEXT -> VALUE" (kn_label_value), "!" appended when
 *                    kn_is_label_value refuses VALUE (never expected)
 *   name TEXT     -> "TEXT: label subdomain" (kn_is_dns_label,
 *                    kn_is_dns_subdomain at 253), "-" for each no
 *   check JSON    -> "ok DEVICE-NAME" or "bad: WHY" for the gpu record
 *                    JSON, read with "\u0000" allowed, so that the check
 *                    itself is seen to refuse strings a NUL would cut
 *
 * TEXT is the rest of the line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "err.h"
#include "gpuobj.h"
#include "kname.h"

static void
check(const char *text)
{
	char why[512], name[GOBJ_DEVICE_NAME_MAX];
	json_error_t jerr;
	json_t *rec = json_loads(text, JSON_ALLOW_NUL, &jerr);

	if (!rec) {
		printf("invalid JSON: %s\n", jerr.text);
		return;
	}
	if (gobj_check(rec, "gpu.canhazgpu.dev", why, sizeof why) < 0)
		printf("bad: %s\n", why);
	else
		printf("ok %s\n", gobj_device_name(rec, name));
	json_decref(rec);
}

int
main(int argc, char **argv)
{
	char *line = NULL, *arg, buf[KN_LABEL_MAX + 1];
	size_t cap = 0;
	ssize_t n;

	(void)argc;
	err_init(argv[0]);
	while ((n = getline(&line, &cap, stdin)) > 0) {
		if (line[n - 1] == '\n')
			line[n - 1] = '\0';
		if (!(arg = strchr(line, ' ')))
			arg = line + strlen(line);
		else
			*arg++ = '\0';
		if (strcmp(line, "label") == 0) {
			kn_label_value(arg, buf);
			printf("%s -> %s%s\n", arg, buf,
				kn_is_label_value(buf) ? "" : " !");
		} else if (strcmp(line, "name") == 0) {
			printf("%s: %s %s\n", arg,
				kn_is_dns_label(arg) ? "label" : "-",
				kn_is_dns_subdomain(arg, KN_SUBDOMAIN_MAX)
					? "subdomain"
					: "-");
		} else if (strcmp(line, "check") == 0) {
			check(arg);
		} else {
			printf("unknown request: %s\n", line);
		}
	}
	free(line);
	return 0;
}
