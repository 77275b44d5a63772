/* noproxy: loopback never goes through a proxy (see noproxy.h). */
#include "noproxy.h"

#include <stdlib.h>

#include <curl/curl.h>

#include "err.h"

void
noproxy_loopback(void *h)
{
	const char *env = getenv("NO_PROXY");
	char *list;

	if (!env || !*env)
		env = getenv("no_proxy");
	list = easprintf("%s%slocalhost,127.0.0.1,::1", env ? env : "",
		env && *env ? "," : "");
	curl_easy_setopt(h, CURLOPT_NOPROXY, list);
	free(list);
}
