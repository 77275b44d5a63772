#!/bin/sh
# cert-make against the real kube-apiserver, as a service account with
# exactly the rights of its Job (Secrets get/create/update, get and
# update only of its own; get/patch of its own MutatingWebhookConfiguration):
# created, then kept (same resourceVersion), renewed for each reason,
# the caBundle of every webhook exactly base64(ca.crt), a configuration
# waited for, refusals named, an unreachable server 75. Everything made
# is removed at the end, also on failure: the cluster is shared.
. "$(dirname "$0")/lib.sh"
need_cluster
NS=t9510-cert-make
CFG=t9510-cert-make
LATE=t9510-cert-make-late
SECRET=hook-certs
SA=system:serviceaccount:$NS:cert-make

# cleanup [--wait=false]: remove all this test makes.
cleanup() {
	k delete mutatingwebhookconfiguration "$CFG" "$LATE" --ignore-not-found >/dev/null 2>&1
	k delete clusterrolebinding,clusterrole t9510-cert-make --ignore-not-found >/dev/null 2>&1
	k delete namespace "$NS" --ignore-not-found --timeout=120s "$@" >/dev/null 2>&1
}
trap 'cleanup --wait=false' EXIT
trap 'exit 1' INT TERM
cleanup

# config NAME: a MutatingWebhookConfiguration that never matters: two
# webhooks for ConfigMaps in namespaces labelled as none is, failurePolicy
# Ignore; the first has a caBundle already, the second none.
config() {
	jq -n --arg name "$1" '{apiVersion: "admissionregistration.k8s.io/v1",
		kind: "MutatingWebhookConfiguration", metadata: {name: $name},
		webhooks: [("a", "b") | {name: "\(.).t9510.canhazgpu.dev",
			clientConfig: ({url: "https://127.0.0.1:1/mutate"} + (if . == "a" then {caBundle: "Cg=="} else {} end)),
			rules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"]}],
			namespaceSelector: {matchLabels: {"t9510.canhazgpu.dev/never": "true"}},
			failurePolicy: "Ignore", sideEffects: "None", admissionReviewVersions: ["v1"]}]}' |
		k apply -f - >/dev/null
}

# The Job's service account and rights, and a kubeconfig with its token.
{
	k create namespace "$NS" &&
	k -n "$NS" create serviceaccount cert-make &&
	k -n "$NS" create role cert-make --verb=create --resource=secrets &&
	k -n "$NS" patch role cert-make --type=json -p "[{\"op\":\"add\",\"path\":\"/rules/-\",\"value\":{\"apiGroups\":[\"\"],\"resources\":[\"secrets\"],\"resourceNames\":[\"$SECRET\"],\"verbs\":[\"get\",\"update\"]}}]" &&
	k -n "$NS" create rolebinding cert-make --role=cert-make --serviceaccount="$NS:cert-make" &&
	k create clusterrole t9510-cert-make --verb=get,patch --resource=mutatingwebhookconfigurations.admissionregistration.k8s.io --resource-name="$CFG" --resource-name="$LATE" &&
	k create clusterrolebinding t9510-cert-make --clusterrole=t9510-cert-make --serviceaccount="$NS:cert-make" &&
	config "$CFG" &&
	TOKEN=$(k -n "$NS" create token cert-make --duration=1h) &&
	k config view --raw --minify -o json | jq --arg t "$TOKEN" '.users = [{name: "sa", user: {token: $t}}]
		| .contexts[0].context.user = "sa"' >sa.kubeconfig
} >setup.out 2>&1 || echo "Bail out! cannot set up: $(cat setup.out)"

# cm ARGS...: cert-make as the service account, for the Service hook in $NS.
cm() { cert-make --kubeconfig sa.kubeconfig -n "$NS" -s hook -S "$SECRET" -w "$CFG" -W 0 "$@"; }
# show: the result line without notAfter, which shows its own test.
show() { jq -c 'del(.notAfter)'; }
# data KEY: the Secret's data[KEY], still base64.
data() { k -n "$NS" get secret "$SECRET" -o json | jq -r --arg k "$1" '.data[$k]'; }
rv() { k -n "$NS" get secret "$SECRET" -o jsonpath='{.metadata.resourceVersion}'; }
bundles() { k get mutatingwebhookconfiguration "$1" -o json | jq -r '.webhooks[].clientConfig.caBundle'; }
NAMES='"hook","hook.t9510-cert-make","hook.t9510-cert-make.svc","hook.t9510-cert-make.svc.cluster.local"'

check_output 'the rights are the Job'"'"'s and no more' '
	for a in "get secrets/$SECRET" "update secrets/$SECRET" "create secrets" "get secrets/other" \
		"update secrets/other" "list secrets" "delete secrets/$SECRET" "patch secrets/$SECRET"; do
		echo "$a: $(k auth can-i --as "$SA" -n "$NS" $a)"
	done
	for a in "get mutatingwebhookconfigurations/$CFG" "patch mutatingwebhookconfigurations/$CFG" \
		"update mutatingwebhookconfigurations/$CFG" "get mutatingwebhookconfigurations/other" \
		"list mutatingwebhookconfigurations" "get secrets/$SECRET -n default"; do
		echo "$a: $(k auth can-i --as "$SA" $a)"
	done' <<X
get secrets/$SECRET: yes
update secrets/$SECRET: yes
create secrets: yes
get secrets/other: no
update secrets/other: no
list secrets: no
delete secrets/$SECRET: no
patch secrets/$SECRET: no
get mutatingwebhookconfigurations/$CFG: yes
patch mutatingwebhookconfigurations/$CFG: yes
update mutatingwebhookconfigurations/$CFG: no
get mutatingwebhookconfigurations/other: no
list mutatingwebhookconfigurations: no
get secrets/$SECRET -n default: no
X

check_output 'no Secret: created, and both webhooks patched (one replace, one add)' '
	cm >run1.json && show <run1.json && k -n "$NS" get secret "$SECRET" -o jsonpath="{.type}{\"\\n\"}"' <<X
{"secret":"$NS/$SECRET","action":"created","reason":"missing","names":[$NAMES],"config":"$CFG","patched":["a.t9510.canhazgpu.dev","b.t9510.canhazgpu.dev"]}
kubernetes.io/tls
X

check 'the Secret holds a chain openssl verifies, notAfter as said; the key is never printed' '
	data ca.crt | base64 -d >ca.crt && data tls.crt | base64 -d >tls.crt && data tls.key | base64 -d >tls.key &&
	openssl verify -CAfile ca.crt tls.crt &&
	test "$(openssl pkey -in tls.key -pubout)" = "$(openssl x509 -in tls.crt -noout -pubkey)" &&
	test "$(jq -r .notAfter run1.json)" = "$(date -u -d "$(openssl x509 -in tls.crt -noout -enddate | cut -d= -f2)" +%Y-%m-%dT%H:%M:%SZ)" &&
	! grep -q "PRIVATE\|$(data tls.key | cut -c1-40)" run1.json'

check_output 'every caBundle is exactly base64(ca.crt)' '
	bundles "$CFG" && base64 -w0 ca.crt && echo' <<X
$(data ca.crt)
$(data ca.crt)
$(data ca.crt)
X

check_output 'a second run keeps it: same resourceVersion, nothing patched' '
	before=$(rv) && cm | show && test "$(rv)" = "$before"' <<X
{"secret":"$NS/$SECRET","action":"kept","names":[$NAMES],"config":"$CFG","patched":[]}
X

# replace ARGS...: the Secret replaced (as the admin) by: kubectl create secret ARGS.
replace() { k -n "$NS" delete secret "$SECRET" >/dev/null && k -n "$NS" create secret "$@" >/dev/null; }
cert-make -o old -n "$NS" -s hook -V 2020-01-01T00:00:00Z,2021-01-01T00:00:00Z >/dev/null
# (an hour short of 20 days: 19 days left however fast or slow the checks
# below run, even within the second it was made)
cert-make -o short -n "$NS" -s hook -V "$(date -u -d '-1 day' +%Y-%m-%dT%H:%M:%SZ),$(date -u -d '+20 days -1 hour' +%Y-%m-%dT%H:%M:%SZ)" >/dev/null
cert-make -o other -n "$NS" -s hook >/dev/null

check_output 'renewed, each time saying why' '
	replace tls "$SECRET" --cert old/tls.crt --key old/tls.key && cm | jq -r "[.action, .reason] | join(\": \")"
	replace generic "$SECRET" --type=kubernetes.io/tls --from-file=old/tls.crt --from-file=old/tls.key --from-file=old/ca.crt &&
		cm | jq -r "[.action, .reason] | join(\": \")"
	replace generic "$SECRET" --type=kubernetes.io/tls --from-file=short/tls.crt --from-file=short/tls.key --from-file=short/ca.crt &&
		cm | jq -r "[.action, .reason] | join(\": \")"
	replace generic "$SECRET" --type=kubernetes.io/tls --from-file=other/tls.crt --from-file=short/tls.key --from-file=other/ca.crt &&
		cm | jq -r "[.action, .reason] | join(\": \")"
	replace generic "$SECRET" --type=kubernetes.io/tls --from-file=other/tls.crt --from-file=other/tls.key --from-file=short/ca.crt &&
		cm | jq -r "[.action, .reason] | join(\": \")"
	cm -H 127.0.0.1 | jq -r "[.action, .reason, .names[-1]] | join(\": \")"
	cm -H 127.0.0.1 | jq -r ".action"' <<'X'
renewed: no ca.crt
renewed: certificate expired at 2021-01-01T00:00:00Z
renewed: expires in 19 days
renewed: tls.key does not match tls.crt: the key is not the certificate's
renewed: tls.crt does not chain to ca.crt: unable to get local issuer certificate
renewed: does not name 127.0.0.1: 127.0.0.1
kept
X

check_output 'after every renewal the caBundle follows the new CA' '
	bundles "$CFG" | sort -u | wc -l && test "$(bundles "$CFG" | sort -u)" = "$(data ca.crt)" && echo same' <<'X'
1
same
X

check_output 'an Opaque Secret cannot become a TLS one: the API'"'"'s refusal, named, status 1' '
	replace generic "$SECRET" --from-file=old/tls.crt && must_fail 1 cm 2>err && cat err' <<X
cert-make: PUT /api/v1/namespaces/$NS/secrets/$SECRET: 422 Unprocessable Entity: Secret "$SECRET" is invalid: type: Invalid value: "kubernetes.io/tls": field is immutable
X

check_output 'refused by RBAC: another Secret, another configuration; none there, as the admin' '
	k -n "$NS" delete secret "$SECRET" >/dev/null
	must_fail 1 cm -S other 2>&1 >/dev/null
	must_fail 1 cm -w other 2>&1 >/dev/null
	must_fail 1 cert-make -n "$NS" -s hook -S "$SECRET" -w "$LATE" -W 0 2>&1 >/dev/null' <<X
cert-make: GET /api/v1/namespaces/$NS/secrets/other: 403 Forbidden: secrets "other" is forbidden: User "$SA" cannot get resource "secrets" in API group "" in the namespace "$NS"
cert-make: GET /apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/other: 403 Forbidden: mutatingwebhookconfigurations.admissionregistration.k8s.io "other" is forbidden: User "$SA" cannot get resource "mutatingwebhookconfigurations" in API group "admissionregistration.k8s.io" at the cluster scope
cert-make: mutatingwebhookconfigurations/$LATE: not found after 0 s
X

check_output 'a configuration applied after the Job started is waited for, then patched' '
	( sleep 3; config "$LATE" ) &
	cm -w "$LATE" -W 60 | jq -c "[.action, .config, .patched]" && wait &&
	test "$(bundles "$LATE" | sort -u)" = "$(data ca.crt)" && echo same' <<X
["kept","$LATE",["a.t9510.canhazgpu.dev","b.t9510.canhazgpu.dev"]]
same
X

# The API server itself trusts what it made: webhook-patch serving the
# Secret's pair, called for ConfigMaps of $NS with failurePolicy Fail.
cert-make --kubeconfig sa.kubeconfig -n "$NS" -s hook -S "$SECRET" -w '' -H 127.0.0.1 >/dev/null &&
	data tls.crt | base64 -d >serve.crt && data tls.key | base64 -d >serve.key
( webhook-patch -i /dev/null -l 127.0.0.1:0 -c serve.crt -k serve.key -N 127.0.0.1 2>serve.err &
  echo $! >serve.pid; wait ) &
check_output 'the API server calls a webhook serving the pair made, trusting the caBundle patched' '
	eventually 30 grep -q "(port [0-9]*)" serve.err && PORT=$(sed -n "s/.*(port \([0-9]*\)).*/\1/p" serve.err) &&
	k get mutatingwebhookconfiguration "$LATE" -o json |
		jq --arg url "https://127.0.0.1:$PORT/mutate" --arg ns "$NS" ".webhooks |= [.[0] | .clientConfig.url = \$url
			| .failurePolicy = \"Fail\" | .namespaceSelector = {matchLabels: {\"kubernetes.io/metadata.name\": \$ns}}]" |
		k replace -f - >/dev/null &&
	cm -w "$LATE" -H 127.0.0.1 | jq -c .patched &&
	eventually 30 k -n "$NS" create configmap t9510 --from-literal=a=b &&
	curl -sk https://127.0.0.1:$PORT/metrics | grep "^k8shazgpu_webhook_reviews_total{outcome=\"allowed\"}"' <<'X'
["a.t9510.canhazgpu.dev"]
k8shazgpu_webhook_reviews_total{outcome="allowed"} 1
X
kill "$(cat serve.pid)" 2>/dev/null

PORT=$(free_port)
jq --arg s "https://127.0.0.1:$PORT" '.clusters[0].cluster.server = $s' sa.kubeconfig >down.kubeconfig
check_output 'an API server that is not there: 75, nothing written' '
	must_fail 75 cert-make --kubeconfig down.kubeconfig -n "$NS" -s hook -S "$SECRET" 2>err >out &&
	sed "s/: Failed to connect.*//" err && ! test -s out' <<X
cert-make: GET https://127.0.0.1:$PORT/api/v1/namespaces/$NS/secrets/$SECRET
X

done_testing
