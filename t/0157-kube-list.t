#!/bin/sh
# A List page read item by item (lib/jitems through t/unit/jitems, then
# lib/kube's kube_list against an HTTPS server on 127.0.0.1 that serves
# crafted pages, t/tlsserve -b): the items array is found in the text
# without reading the page whole; strings holding brackets, quotes and
# escapes, a nested "items" key and every kind of element are stepped
# over as JSON reads them; a page whose items cannot be split (none, two,
# an escaped key, not an object) is read whole with the same result; a
# malformed element or separator is named by its index and byte, and the
# list fails (kind baddata) with nothing handed on. An apply's answer read
# by kube_apply_meta keeps only apiVersion, kind and the metadata's names
# and versions, and is still refused whole when bad where it is not kept;
# it asks the server for the metadata alone (PartialObjectMetadata).
# An answer that asks to come back (a 429, a 5xx with Retry-After) is
# sent again after the time it names, body and all, ten tries at most, no
# wait over ten seconds; a 5xx without Retry-After fails at once.
. "$(dirname "$0")/lib.sh"

cat >elements.json <<'EOF'
{"kind":"NodeList","metadata":{"items":[1]},"items":[ {"a":"}]\"x"} , [1,[2]] ,"s,]" ,3e5,null ],"x":{}}
EOF
check_output 'jitems: the items array and each element, found in the text' 'unit jitems <elements.json' <<'EOF'
split 52 96
54 67 {"a":"}]\"x"}
70 77 [1,[2]]
79 84 "s,]"
86 89 3e5
90 94 null
end
EOF

check_output 'jitems: an empty array; what is read whole; bad separators named by byte' '
	for p in "{\"items\":[]}" "{\"items\":null}" "{\"items\":[1],\"items\":[2]}" \
		"{\"it\\u0065ms\":[1]}" "[1]" "{\"items\":[{\"a\":\"open]}" "{\"a\" 1}" \
		"{\"items\":[1,]}" "{\"items\":[1 2]}" "{\"items\":[,1]}"; do
		printf "%s" "$p" | unit jitems; echo "exit $?"
	done' <<'EOF'
split 9 11
end
exit 0
whole
exit 0
whole
exit 0
whole
exit 0
whole
exit 0
whole
exit 0
whole
exit 0
split 9 13
10 11 1
error at byte 13
exit 1
split 9 14
10 11 1
error at byte 13
exit 1
split 9 13
error at byte 11
exit 1
EOF

# ---- kube_list against crafted pages ----
echo '{}' >page.json
tls_serve -b page.json -q queue
printf '%s\n' "apiVersion: v1" "kind: Config" "current-context: t" \
	"contexts: [{name: t, context: {cluster: c, user: u}}]" \
	"clusters: [{name: c, cluster: {server: \"$S\", certificate-authority: $SCRATCH/tls.crt}}]" \
	"users: [{name: u, user: {token: x}}]" >kc
# list PAGE: kube_list of the page PAGE (a file) as the server's answer
list() { cp "$1" page.json && unit kube -k kc list /api/v1/nodes 0 2>&1; echo "exit $?"; }

cat >split.json <<'EOF'
{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"7","items":["not these"]},
 "items":[{"metadata":{"name":"a{[\"b"},"spec":{"items":[{"x":"]}"}]}},
	{"kind":"Special","metadata":{"name":"\u00e9\\"}} ] }
EOF
check_output 'a page read item by item: each typed with the list kind, strings intact' 'list split.json' <<'EOF'
{"resourceVersion":"7","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"a{[\"b"},"spec":{"items":[{"x":"]}"}]}},{"kind":"Special","metadata":{"name":"é\\"}}]}
exit 0
EOF

# The same page with its items key escaped: no split, the page is read whole.
sed 's/^ "items"/ "it\\u0065ms"/' split.json >whole.json
check_output 'the same page read whole (an escaped key): the same answer' 'list whole.json' <<'EOF'
{"resourceVersion":"7","items":[{"apiVersion":"v1","kind":"Node","metadata":{"name":"a{[\"b"},"spec":{"items":[{"x":"]}"}]}},{"kind":"Special","metadata":{"name":"é\\"}}]}
exit 0
EOF

printf '{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"8"},"items":[{"a":1},{"a":tru},{"a":3}]}' >bad-item.json
printf '{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"8"},"items":[{"a":1} {"a":2}]}' >bad-sep.json
printf '{"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"8"},"items":[{"a":1}]} trailing' >bad-top.json
check_output 'a malformed element, separator or page: named, kind baddata, exit 1' '
	for f in bad-item bad-sep bad-top; do list $f.json; done' <<'EOF'
kube: GET /api/v1/nodes: invalid JSON answer: items[1] (byte 90): invalid token near 'tru'
kind=baddata status=200 reason=
exit 1
kube: GET /api/v1/nodes: invalid JSON answer: items: a value or ',' expected at byte 90
kind=baddata status=200 reason=
exit 1
kube: GET /api/v1/nodes: invalid JSON answer: end of file expected near 'trailing'
kind=baddata status=200 reason=
exit 1
EOF

# ---- an apply's answer read for its metadata alone (kube_apply_meta) ----
cat >applied.json <<'EOF'
{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"n","uid":"u1","resourceVersion":"42","generation":3,
 "labels":{"a":"b"},"annotations":{"x":"}\"]"},"managedFields":[{"manager":"m","fieldsV1":{"f:spec":{}}}]},
 "spec":{"template":{"spec":{"containers":[{"name":"c","image":"i"}]}}},"status":{"active":1}}
EOF
check_output 'apply-meta: the answer kept to its names and versions; apply: whole' '
	cp applied.json page.json
	echo "{\"kind\":\"Job\"}" | unit kube -k kc apply-meta /apis/batch/v1/namespaces/n/jobs/j m force; echo "exit $?"
	echo "{\"kind\":\"Job\"}" | unit kube -k kc apply /apis/batch/v1/namespaces/n/jobs/j m force | jq -c "[.metadata.managedFields[0].manager, .status]"' <<'EOF'
{"apiVersion":"batch/v1","kind":"Job","metadata":{"name":"j","namespace":"n","uid":"u1","resourceVersion":"42","generation":3}}
exit 0
["m",{"active":1}]
EOF

# What is left out is still checked: a bad token inside the template fails.
sed 's/"image":"i"/"image":tru/' applied.json >bad-applied.json
check_output 'apply-meta: an answer bad where it is not kept is refused, baddata' '
	cp bad-applied.json page.json
	echo "{}" | unit kube -k kc apply-meta /apis/batch/v1/namespaces/n/jobs/j m 2>&1; echo "exit $?"' <<'EOF'
kube: PATCH /apis/batch/v1/namespaces/n/jobs/j: invalid JSON answer: invalid token near 'tru'
kind=baddata status=200 reason=
exit 1
EOF
grep -c '^request PATCH /apis/batch/v1/namespaces/n/jobs/j?fieldManager=m&force=true$' tls.log >patches
check_output 'the applies were PATCHes with the field manager and force' 'cat patches' <<'EOF'
2
EOF
check_output 'apply-meta asks for the metadata alone (or the object, where a server cannot), apply for the object' \
	'sed -n "s/^accept //p" tls.log' <<'EOF'
application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json
application/json
application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1, application/json
EOF

# ---- answers that ask to come back (t/tlsserve -q) ----
echo '{"kind":"Node","metadata":{"name":"x"}}' >page.json
# come LINE...: the queued answers; then a GET, its exit status and the
# answers the server gave (queued ones by status, "got" for each request)
come() {
	: >tls.log
	printf '%s\n' "$@" >queue
	unit kube -k kc get /api/v1/nodes/x >got 2>&1
	st=$?
	sed "s/127.0.0.1:[0-9]*/127.0.0.1:PORT/" got
	echo "exit $st: $(sed -n 's/^queued \([0-9]*\) .*/\1/p; s/^request GET .*/got/p' tls.log | tr '\n' ' ')"
}
check_output 'a 429 or a 5xx with Retry-After is tried again; a 5xx without is not' '
	come "429 0" "429 0"; come "503 0"; come "429 -"; come "500 -"' <<'EOF'
{"kind":"Node","metadata":{"name":"x"}}
exit 0: got 429 got 429 got 
{"kind":"Node","metadata":{"name":"x"}}
exit 0: got 503 got 
{"kind":"Node","metadata":{"name":"x"}}
exit 0: got 429 got 
kube: GET https://127.0.0.1:PORT/api/v1/nodes/x: 500 Internal Server Error: queued 500
kind=temp status=500 reason=
exit 75: got 500 
EOF
check_output 'ten tries at most, said in the error; a wait over ten seconds is not waited' '
	come "429 0" "429 0" "429 0" "429 0" "429 0" "429 0" "429 0" "429 0" "429 0" "429 0" "429 0"; rm queue
	come "429 11"' <<'EOF'
kube: GET https://127.0.0.1:PORT/api/v1/nodes/x: 429 Too Many Requests: queued 429 (10 tries)
kind=temp status=429 reason=
exit 75: got 429 got 429 got 429 got 429 got 429 got 429 got 429 got 429 got 429 got 429 
kube: GET https://127.0.0.1:PORT/api/v1/nodes/x: 429 Too Many Requests: queued 429
kind=temp status=429 reason=
exit 75: got 429 
EOF
check_output 'an apply sent again carries its body again' '
	cp applied.json page.json; : >tls.log; echo "429 0" >queue
	echo "{\"kind\":\"Job\"}" | unit kube -k kc apply-meta /apis/batch/v1/namespaces/n/jobs/j m | jq -c .metadata.uid
	grep -c "^request PATCH /apis/batch/v1/namespaces/n/jobs/j?fieldManager=m$" tls.log' <<'EOF'
"u1"
2
EOF

done_testing
