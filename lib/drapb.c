/* drapb: the plugin messages between protobuf-c and jansson (see
 * drapb.h). Encoders point the messages' strings into the JSON they are
 * given (nothing is copied) and free only the arrays they allocate. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dra.pb-c.h"
#include "registration.pb-c.h"

#include "drapb.h"
#include "err.h"

/* protoc-c's names carry the whole package name */
#define DRA(x) K8s__Io__Kubelet__Pkg__Apis__Dra__V1__##x
#define DRA_INIT(x) k8s__io__kubelet__pkg__apis__dra__v1__##x##__init
#define DRA_DESC(x) k8s__io__kubelet__pkg__apis__dra__v1__##x##__descriptor

typedef DRA(Claim) Claim;
typedef DRA(Device) Device;
typedef DRA(NodePrepareResourcesRequest) PrepareRequest;
typedef DRA(NodePrepareResourcesResponse) PrepareResponse;
typedef DRA(NodePrepareResourcesResponse__ClaimsEntry) PrepareEntry;
typedef DRA(NodePrepareResourceResponse) PrepareResult;
typedef DRA(NodeUnprepareResourcesResponse) UnprepareResponse;
typedef DRA(NodeUnprepareResourcesResponse__ClaimsEntry) UnprepareEntry;
typedef DRA(NodeUnprepareResourceResponse) UnprepareResult;

/* pack returns m's encoding, malloc'd (never NULL, even when empty). */
static uint8_t *
pack(const ProtobufCMessage *m, size_t *len)
{
	size_t n = protobuf_c_message_get_packed_size(m);
	uint8_t *buf = emalloc(n ? n : 1);

	*len = protobuf_c_message_pack(m, buf);
	return buf;
}

/* unpack decodes buf as a message of d, or says why it cannot. */
static ProtobufCMessage *
unpack(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len,
	char *why, size_t n)
{
	static const uint8_t none[1];
	ProtobufCMessage *m;

	m = protobuf_c_message_unpack(d, NULL, len, len ? buf : none);
	if (!m)
		snprintf(why, n, "not a valid %s message", d->short_name);
	return m;
}

/* ---- JSON to protobuf ------------------------------------------------ */

/* str sets *out to member key of o: "" when absent; -1 when not a string. */
static int
str(const json_t *o, const char *key, char **out)
{
	const json_t *v = json_object_get(o, key);

	if (!v) {
		*out = (char *)"";
		return 0;
	}
	if (!json_is_string(v))
		return -1;
	*out = (char *)json_string_value(v);
	return 0;
}

/* strs sets *out (malloc'd, or NULL) and *n to the strings of the array
 * member key of o; -1 when it is not an array of strings. */
static int
strs(const json_t *o, const char *key, char ***out, size_t *n)
{
	const json_t *a = json_object_get(o, key);
	size_t i;

	*out = NULL;
	*n = 0;
	if (!a)
		return 0;
	if (!json_is_array(a))
		return -1;
	for (i = 0; i < json_array_size(a); i++)
		if (!json_is_string(json_array_get(a, i)))
			return -1;
	if (json_array_size(a) == 0)
		return 0;
	*out = ecalloc(json_array_size(a), sizeof **out);
	for (i = 0; i < json_array_size(a); i++)
		(*out)[i] = (char *)json_string_value(json_array_get(a, i));
	*n = json_array_size(a);
	return 0;
}

static void
free_result(PrepareResult *r)
{
	size_t i;

	if (!r->devices)
		return;
	for (i = 0; i < r->n_devices; i++) {
		if (!r->devices[i])
			continue;
		free(r->devices[i]->request_names);
		free(r->devices[i]->cdi_device_ids);
		free(r->devices[i]);
	}
	free(r->devices);
}

/* prepared fills r from one claim's JSON; -1 when it is not of the shape
 * (r is then partly filled: free_result frees it). */
static int
prepared(const json_t *v, PrepareResult *r)
{
	const json_t *devs = json_object_get(v, "devices"), *d;
	size_t i;

	DRA_INIT(node_prepare_resource_response)(r);
	if (!json_is_object(v) || str(v, "error", &r->error) < 0 ||
		(devs && !json_is_array(devs)))
		return -1;
	if (!json_array_size(devs))
		return 0;
	r->devices = ecalloc(json_array_size(devs), sizeof *r->devices);
	json_array_foreach(devs, i, d) {
		Device *dev = ecalloc(1, sizeof *dev);

		DRA_INIT(device)(dev);
		r->devices[i] = dev;
		r->n_devices = i + 1;
		if (!json_is_object(d) ||
			strs(d, "requestNames", &dev->request_names,
				&dev->n_request_names) < 0 ||
			str(d, "poolName", &dev->pool_name) < 0 ||
			str(d, "deviceName", &dev->device_name) < 0 ||
			strs(d, "cdiDeviceIDs", &dev->cdi_device_ids,
				&dev->n_cdi_device_ids) < 0)
			return -1;
	}
	return 0;
}

uint8_t *
dpb_prepare_response(const json_t *r, size_t *len)
{
	PrepareResponse m;
	PrepareEntry *entries;
	PrepareResult *results;
	const json_t *claims = json_object_get(r, "claims");
	json_t *v;
	const char *uid;
	uint8_t *out = NULL;
	size_t i = 0, n;

	*len = 0;
	if (!json_is_object(r) || (claims && !json_is_object(claims)))
		return NULL;
	DRA_INIT(node_prepare_resources_response)(&m);
	n = json_object_size(claims);
	entries = ecalloc(n ? n : 1, sizeof *entries);
	results = ecalloc(n ? n : 1, sizeof *results);
	m.claims = ecalloc(n ? n : 1, sizeof *m.claims);
	json_object_foreach((json_t *)claims, uid, v) {
		DRA_INIT(node_prepare_resources_response__claims_entry)
		(&entries[i]);
		entries[i].key = (char *)uid;
		entries[i].value = &results[i];
		m.claims[i] = &entries[i];
		if (prepared(v, &results[i++]) < 0)
			goto out;
	}
	m.n_claims = n;
	out = pack(&m.base, len);
out:
	while (i > 0)
		free_result(&results[--i]);
	free(m.claims);
	free(results);
	free(entries);
	return out;
}

uint8_t *
dpb_unprepare_response(const json_t *r, size_t *len)
{
	UnprepareResponse m;
	UnprepareEntry *entries;
	UnprepareResult *results;
	const json_t *claims = json_object_get(r, "claims");
	json_t *v;
	const char *uid;
	uint8_t *out = NULL;
	size_t i = 0, n;

	*len = 0;
	if (!json_is_object(r) || (claims && !json_is_object(claims)))
		return NULL;
	DRA_INIT(node_unprepare_resources_response)(&m);
	n = json_object_size(claims);
	entries = ecalloc(n ? n : 1, sizeof *entries);
	results = ecalloc(n ? n : 1, sizeof *results);
	m.claims = ecalloc(n ? n : 1, sizeof *m.claims);
	json_object_foreach((json_t *)claims, uid, v) {
		DRA_INIT(node_unprepare_resources_response__claims_entry)
		(&entries[i]);
		DRA_INIT(node_unprepare_resource_response)(&results[i]);
		entries[i].key = (char *)uid;
		entries[i].value = &results[i];
		m.claims[i] = &entries[i];
		if (!json_is_object(v) ||
			str(v, "error", &results[i].error) < 0)
			goto out;
		i++;
	}
	m.n_claims = n;
	out = pack(&m.base, len);
out:
	free(m.claims);
	free(results);
	free(entries);
	return out;
}

uint8_t *
dpb_plugin_info(const char *type, const char *name, const char *endpoint,
	const char *const *versions, size_t *len)
{
	Pluginregistration__PluginInfo m;
	uint8_t *out;
	size_t n = 0;

	pluginregistration__plugin_info__init(&m);
	m.type = (char *)type;
	m.name = (char *)name;
	m.endpoint = (char *)endpoint;
	while (versions && versions[n])
		n++;
	m.n_supported_versions = n;
	m.supported_versions = (char **)versions;
	out = pack(&m.base, len);
	return out;
}

uint8_t *
dpb_encode_claims(const json_t *r, size_t *len)
{
	PrepareRequest m;
	Claim *claims;
	const json_t *a = json_object_get(r, "claims"), *c;
	uint8_t *out = NULL;
	size_t i, n;

	*len = 0;
	if (!json_is_object(r) || (a && !json_is_array(a)))
		return NULL;
	DRA_INIT(node_prepare_resources_request)(&m);
	n = json_array_size(a);
	claims = ecalloc(n ? n : 1, sizeof *claims);
	m.claims = ecalloc(n ? n : 1, sizeof *m.claims);
	json_array_foreach(a, i, c) {
		DRA_INIT(claim)(&claims[i]);
		m.claims[i] = &claims[i];
		if (!json_is_object(c) ||
			str(c, "namespace", &claims[i].namespace_) < 0 ||
			str(c, "uid", &claims[i].uid) < 0 ||
			str(c, "name", &claims[i].name) < 0)
			goto out;
	}
	m.n_claims = n;
	out = pack(&m.base, len);
out:
	free(m.claims);
	free(claims);
	return out;
}

uint8_t *
dpb_encode_registration_status(int registered, const char *error, size_t *len)
{
	Pluginregistration__RegistrationStatus m;

	pluginregistration__registration_status__init(&m);
	m.plugin_registered = registered != 0;
	m.error = (char *)(error ? error : "");
	return pack(&m.base, len);
}

/* ---- protobuf to JSON ------------------------------------------------ */

/* set_str sets o[key] to s; -1 when s is not valid UTF-8 (protobuf-c does
 * not check). */
static int
set_str(json_t *o, const char *key, const char *s)
{
	return json_object_set_new(o, key, json_string(s ? s : ""));
}

static json_t *
str_array(char **v, size_t n)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < n; i++)
		if (json_array_append_new(a, json_string(v[i] ? v[i] : "")) <
			0) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* bad_utf8 ends a decoder: j is dropped and why says so. */
static json_t *
bad_utf8(json_t *j, char *why, size_t n)
{
	json_decref(j);
	snprintf(why, n, "a string is not valid UTF-8");
	return NULL;
}

json_t *
dpb_claims(const uint8_t *buf, size_t len, char *why, size_t n)
{
	PrepareRequest *m;
	json_t *out, *a, *c;
	size_t i;
	int bad = 0;

	m = (PrepareRequest *)unpack(&DRA_DESC(node_prepare_resources_request),
		buf, len, why, n);
	if (!m)
		return NULL;
	a = json_array();
	out = json_pack("{s:o}", "claims", a);
	for (i = 0; i < m->n_claims && !bad; i++) {
		c = json_object();
		json_array_append_new(a, c);
		bad = set_str(c, "namespace", m->claims[i]->namespace_) < 0 ||
			set_str(c, "uid", m->claims[i]->uid) < 0 ||
			set_str(c, "name", m->claims[i]->name) < 0;
	}
	protobuf_c_message_free_unpacked(&m->base, NULL);
	return bad ? bad_utf8(out, why, n) : out;
}

int
dpb_registration_status(const uint8_t *buf, size_t len, int *registered,
	char **error)
{
	Pluginregistration__RegistrationStatus *m;
	char why[64];

	m = (Pluginregistration__RegistrationStatus *)
		unpack(&pluginregistration__registration_status__descriptor,
			buf, len, why, sizeof why);
	if (!m)
		return -1;
	*registered = m->plugin_registered != 0;
	*error = estrdup(m->error ? m->error : "");
	protobuf_c_message_free_unpacked(&m->base, NULL);
	return 0;
}

/* device_json returns one Device's JSON, or NULL for bad UTF-8. */
static json_t *
device_json(const Device *d)
{
	json_t *o = json_object(), *names, *ids;

	names = str_array(d->request_names, d->n_request_names);
	ids = str_array(d->cdi_device_ids, d->n_cdi_device_ids);
	if (!names || !ids) {
		json_decref(names);
		json_decref(ids);
		json_decref(o);
		return NULL;
	}
	json_object_set_new(o, "requestNames", names);
	if (set_str(o, "poolName", d->pool_name) < 0 ||
		set_str(o, "deviceName", d->device_name) < 0) {
		json_decref(ids);
		json_decref(o);
		return NULL;
	}
	json_object_set_new(o, "cdiDeviceIDs", ids);
	return o;
}

json_t *
dpb_decode_prepare_response(const uint8_t *buf, size_t len, char *why, size_t n)
{
	PrepareResponse *m;
	json_t *claims, *out, *c, *devs;
	size_t i, j;
	int bad = 0;

	m = (PrepareResponse *)unpack(&DRA_DESC(
					      node_prepare_resources_response),
		buf, len, why, n);
	if (!m)
		return NULL;
	claims = json_object();
	out = json_pack("{s:o}", "claims", claims);
	for (i = 0; i < m->n_claims && !bad; i++) {
		const PrepareEntry *e = m->claims[i];
		const PrepareResult *r = e->value;

		devs = json_array();
		c = json_pack("{s:o}", "devices", devs);
		bad = json_object_set_new(claims, e->key ? e->key : "", c) < 0;
		for (j = 0; r && j < r->n_devices && !bad; j++)
			bad = json_array_append_new(devs,
				      device_json(r->devices[j])) < 0;
		if (!bad && r && r->error && *r->error)
			bad = set_str(c, "error", r->error) < 0;
	}
	protobuf_c_message_free_unpacked(&m->base, NULL);
	return bad ? bad_utf8(out, why, n) : out;
}

json_t *
dpb_decode_unprepare_response(const uint8_t *buf, size_t len, char *why,
	size_t n)
{
	UnprepareResponse *m;
	json_t *claims, *out, *c;
	size_t i;
	int bad = 0;

	m = (UnprepareResponse *)
		unpack(&DRA_DESC(node_unprepare_resources_response), buf, len,
			why, n);
	if (!m)
		return NULL;
	claims = json_object();
	out = json_pack("{s:o}", "claims", claims);
	for (i = 0; i < m->n_claims && !bad; i++) {
		const UnprepareEntry *e = m->claims[i];

		c = json_object();
		bad = json_object_set_new(claims, e->key ? e->key : "", c) < 0;
		if (!bad && e->value && e->value->error && *e->value->error)
			bad = set_str(c, "error", e->value->error) < 0;
	}
	protobuf_c_message_free_unpacked(&m->base, NULL);
	return bad ? bad_utf8(out, why, n) : out;
}

json_t *
dpb_decode_plugin_info(const uint8_t *buf, size_t len, char *why, size_t n)
{
	Pluginregistration__PluginInfo *m;
	json_t *out, *versions;
	int bad;

	m = (Pluginregistration__PluginInfo *)
		unpack(&pluginregistration__plugin_info__descriptor, buf, len,
			why, n);
	if (!m)
		return NULL;
	out = json_object();
	versions = str_array(m->supported_versions, m->n_supported_versions);
	bad = set_str(out, "type", m->type) < 0 ||
		set_str(out, "name", m->name) < 0 ||
		set_str(out, "endpoint", m->endpoint) < 0;
	if (bad)
		json_decref(versions);
	else
		bad = json_object_set_new(out, "supportedVersions", versions) <
			0;
	protobuf_c_message_free_unpacked(&m->base, NULL);
	return bad ? bad_utf8(out, why, n) : out;
}
