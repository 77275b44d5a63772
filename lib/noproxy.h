/* noproxy: what every HTTP client of the tools does about proxies.
 *
 * Threads: any thread, on a handle of its own. */
#ifndef HAZ_NOPROXY_H
#define HAZ_NOPROXY_H

/* noproxy_loopback keeps proxies from $https_proxy and friends away from
 * loopback on the curl easy handle h, as kubectl does, whatever $NO_PROXY
 * says: the API server, the local registry and hub are never proxied. */
void noproxy_loopback(void *h);

#endif
