/* drapb (dpb_): the kubelet's plugin messages (proto/registration.proto,
 * proto/dra.proto) to and from jansson JSON, so the plugin's decisions
 * take and give JSON and never see protobuf.
 *
 * The JSON shapes (camelCase, as the Kubernetes API writes its fields):
 *	claims     {"claims":[{"namespace":"..","uid":"..","name":".."}]}
 *	prepared   {"claims":{"<uid>":{"devices":[{"requestNames":[".."],
 *	             "poolName":"..","deviceName":"..","cdiDeviceIDs":[".."]}],
 *	             "error":".."}}}
 *	unprepared {"claims":{"<uid>":{"error":".."}}}
 *	plugin     {"type":"..","name":"..","endpoint":"..",
 *	             "supportedVersions":[".."]}
 * On the way out a missing member is the empty value and "error":"" is
 * no error; members not named here are ignored. On the way in every member
 * is written, but "error" only when not empty.
 *
 * Buffers returned are malloc'd (the caller frees them); an empty message
 * is 0 bytes in a non-NULL buffer. Bad input never aborts: the decoders
 * return NULL with a reason in why (n bytes), the encoders NULL when the
 * JSON is not of the shape above. Strings must be valid UTF-8 both ways
 * (JSON's rule; protobuf's for proto3 strings too).
 *
 * Threads: no state of its own: any thread, on messages of its own. */
#ifndef HAZ_DRAPB_H
#define HAZ_DRAPB_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

/* dpb_claims decodes a NodePrepareResourcesRequest or a
 * NodeUnprepareResourcesRequest (the same shape) into claims JSON. */
json_t *dpb_claims(const uint8_t *buf, size_t len, char *why, size_t n);

/* dpb_prepare_response encodes prepared JSON as a
 * NodePrepareResourcesResponse (one map entry per claim, in r's order). */
uint8_t *dpb_prepare_response(const json_t *r, size_t *len);

/* dpb_unprepare_response encodes unprepared JSON as a
 * NodeUnprepareResourcesResponse. */
uint8_t *dpb_unprepare_response(const json_t *r, size_t *len);

/* dpb_plugin_info encodes a PluginInfo; versions is NULL-ended (NULL:
 * none). */
uint8_t *dpb_plugin_info(const char *type, const char *name,
	const char *endpoint, const char *const *versions, size_t *len);

/* dpb_registration_status decodes a RegistrationStatus: *registered 0 or
 * 1, *error a malloc'd string ("" for none). Returns 0, or -1 when buf
 * does not decode (nothing is then set). */
int dpb_registration_status(const uint8_t *buf, size_t len, int *registered,
	char **error);

/* The kubelet's side, for test clients. */

/* dpb_encode_claims encodes claims JSON as a NodePrepareResourcesRequest
 * (= NodeUnprepareResourcesRequest). */
uint8_t *dpb_encode_claims(const json_t *r, size_t *len);

/* dpb_encode_registration_status encodes a RegistrationStatus; error may
 * be NULL. */
uint8_t *dpb_encode_registration_status(int registered, const char *error,
	size_t *len);

/* dpb_decode_prepare_response, dpb_decode_unprepare_response and
 * dpb_decode_plugin_info decode those messages into their JSON. */
json_t *dpb_decode_prepare_response(const uint8_t *buf, size_t len, char *why,
	size_t n);
json_t *dpb_decode_unprepare_response(const uint8_t *buf, size_t len, char *why,
	size_t n);
json_t *dpb_decode_plugin_info(const uint8_t *buf, size_t len, char *why,
	size_t n);

#endif
