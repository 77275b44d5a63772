#!/bin/sh
# gpu-alert: device health transitions read from Node watch events and gpu
# records, posted to t/alertserve (a webhook on 127.0.0.1) as Slack and
# Teams messages, checked body by body; deduplication, the rate limit,
# retries on 5xx and 429 (Retry-After), refused and hanging URLs (dropped,
# never printed, reading going on), bad records, the Secret read through
# an API server (alertserve playing one), and a real cluster's when one
# is up.
. "$(dirname "$0")/lib.sh"

"$TOP/t/alertserve" -l hook.log --secret ns1/alert-webhook=secret.json \
	>serve.out 2>serve.err 3>&- 4>&- &
serve_pid=$!
trap 'kill $serve_pid 2>/dev/null' EXIT
eventually 30 grep -q '^listening on' serve.out ||
	{ echo "Bail out! alertserve did not start: $(cat serve.err)"; exit 1; }
PORT=$(sed -n 's/^listening on 127.0.0.1://p' serve.out)
E=http://127.0.0.1:$PORT
echo "$E/hook" >good.url
DEAD=$(free_port)
echo "http://127.0.0.1:$DEAD/services/T0/B0/secret" >refused.url
# ctl: a fault for the next posts; mark/since: the log after a mark
ctl() { curl -sf --noproxy '*' -o /dev/null --data "$1" "$E/_control"; }
mark() { wc -l <hook.log; }
since() { tail -n "+$(($1 + 1))" hook.log; }
bodies() { since "$1" | jq -c 'select(.n > 0) | .body'; }
: >hook.log

# node TYPE NAME DEVICES: a Node watch event as claim-watch writes it,
# DEVICES the agentaflow.gpu/devices array (JSON) as claim-make writes it
node() {
	jq -cn --arg t "$1" --arg n "$2" --argjson d "$3" \
		'{type: $t, object: {apiVersion: "v1", kind: "Node",
		  metadata: {name: $n, annotations: {"agentaflow.gpu/devices": ($d | tojson)}}}}'
}
# dev UUID INDEX HEALTH TEMP ECC [REASONS]: one entry of the annotation
dev() {
	printf '{"index":%s,"uuid":"%s","product":"NVIDIA H100 80GB HBM3","memory_mib":81559,"mig":null,"health":"%s","held":false,"temp_c":%s,"ecc_errors":%s,"health_reasons":%s}' \
		"$2" "$1" "$3" "$4" "$5" "${6:-[]}"
}
OTHER=$(dev GPU-b 1 ok 35 0)
{
	node ADDED gpu-1 "[$(dev GPU-a 0 ok 40 0),$OTHER]"
	node MODIFIED gpu-1 "[$(dev GPU-a 0 ok 86 0),$OTHER]"
	node MODIFIED gpu-1 "[$(dev GPU-a 0 ok 60 3),$OTHER]"
	node MODIFIED gpu-1 "[$(dev GPU-a 0 unhealthy 60 3 '["ecc_errors 3 > 0"]'),$OTHER]"
	node MODIFIED gpu-1 "[$(dev GPU-a 0 warn 60 3 '["power 701W >= 100% of 700W"]'),$OTHER]"
} >four.ndjson

check_output '-h prints the usage and the options to stdout' \
	'gpu-alert -h | head -n 4' <<'X'
usage: gpu-alert [-nv] [-s [namespace/]secret] [-k key] [-u file]
                 [-f slack|teams|auto] [-r per-minute] [-R tries]
                 [-t seconds] [-T celsius] [--context name]
                 [--kubeconfig file] [-S [namespace/]configmap]
X
check_output 'bad usage exits 2 naming the option' \
	'for a in "-r 0" "-R x" "-f discord" "-t -1" "-s a/b/c" "-u f -s x" "-1 -r 5" "-Z"; do
		must_fail 2 gpu-alert $a </dev/null 2>&1 | grep -v "^ \|^usage" | sed "s|^[^ ]*/gpu-alert:|gpu-alert:|"; done' <<'X'
gpu-alert: -r: not a whole number from 1 to 100000: 0
gpu-alert: -R: not a whole number from 1 to 100: x
gpu-alert: -f: not slack, teams or auto: discord
gpu-alert: -t: not a number from 0.001 to 3600: -1
gpu-alert: -s: not [namespace/]name: a/b/c
gpu-alert: -u excludes -s, -k, --context and --kubeconfig
gpu-alert: -1 takes no file and no -r
gpu-alert: invalid option -- 'Z'
X
check_output '-S names a ConfigMap, and needs the cluster' \
	'for a in "-S a/b/c" "-u f -S x" "-1 -S x"; do
		must_fail 2 gpu-alert $a </dev/null 2>&1 | grep -v "^ \|^usage" | sed "s|^[^ ]*/gpu-alert:|gpu-alert:|"; done' <<'X'
gpu-alert: -S: not [namespace/]name: a/b/c
gpu-alert: -S excludes -u and -1
gpu-alert: -S excludes -u and -1
X

m=$(mark)
check_output 'temperature, ecc, unhealthy, recovered: one record each, in order, each delivered at the first try' \
	'gpu-alert -u good.url four.ndjson' <<'X'
{"kind":"alert","node":"gpu-1","device":"GPU-a","event":"temperature","sent":true,"tries":1}
{"kind":"alert","node":"gpu-1","device":"GPU-a","event":"ecc","sent":true,"tries":1}
{"kind":"alert","node":"gpu-1","device":"GPU-a","event":"unhealthy","sent":true,"tries":1}
{"kind":"alert","node":"gpu-1","device":"GPU-a","event":"recovered","sent":true,"tries":1}
X
check_output 'Slack bodies (auto for a host that is not Microsoft'\''s), posted as application/json to the URL'\''s path' \
	"since $m | jq -c '[.path, .content_type, .user_agent, .answer]' | uniq -c | sed 's/^ *//'; bodies $m" <<'X'
4 ["/hook","application/json","gpu-alert/0.1.0",200]
{"text":"GPU 0 on node gpu-1 is at 86C (threshold 85C)","attachments":[{"color":"warning","fields":[{"title":"Node","value":"gpu-1","short":true},{"title":"GPU","value":"0","short":true},{"title":"UUID","value":"GPU-a","short":false},{"title":"Product","value":"NVIDIA H100 80GB HBM3","short":true},{"title":"Health","value":"ok","short":true},{"title":"Temperature","value":"86C","short":true},{"title":"ECC errors","value":"0","short":true}]}]}
{"text":"GPU 0 on node gpu-1: uncorrected ECC errors rose from 0 to 3","attachments":[{"color":"warning","fields":[{"title":"Node","value":"gpu-1","short":true},{"title":"GPU","value":"0","short":true},{"title":"UUID","value":"GPU-a","short":false},{"title":"Product","value":"NVIDIA H100 80GB HBM3","short":true},{"title":"Health","value":"ok","short":true},{"title":"Temperature","value":"60C","short":true},{"title":"ECC errors","value":"3","short":true}]}]}
{"text":"GPU 0 on node gpu-1 is unhealthy: ecc_errors 3 &gt; 0","attachments":[{"color":"danger","fields":[{"title":"Node","value":"gpu-1","short":true},{"title":"GPU","value":"0","short":true},{"title":"UUID","value":"GPU-a","short":false},{"title":"Product","value":"NVIDIA H100 80GB HBM3","short":true},{"title":"Health","value":"unhealthy","short":true},{"title":"Temperature","value":"60C","short":true},{"title":"ECC errors","value":"3","short":true},{"title":"Reasons","value":"ecc_errors 3 &gt; 0","short":false}]}]}
{"text":"GPU 0 on node gpu-1 recovered: health is warn","attachments":[{"color":"good","fields":[{"title":"Node","value":"gpu-1","short":true},{"title":"GPU","value":"0","short":true},{"title":"UUID","value":"GPU-a","short":false},{"title":"Product","value":"NVIDIA H100 80GB HBM3","short":true},{"title":"Health","value":"warn","short":true},{"title":"Temperature","value":"60C","short":true},{"title":"ECC errors","value":"3","short":true},{"title":"Reasons","value":"power 701W &gt;= 100% of 700W","short":false}]}]}
X

m=$(mark)
check_output 'Teams bodies with -f teams: an Adaptive Card message' \
	"gpu-alert -f teams -u good.url four.ndjson >/dev/null && bodies $m" <<'X'
{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","contentUrl":null,"content":{"$schema":"http://adaptivecards.io/schemas/adaptive-card.json","type":"AdaptiveCard","version":"1.4","body":[{"type":"TextBlock","text":"GPU 0 on node gpu-1 is at 86C (threshold 85C)","wrap":true,"weight":"Bolder","color":"Warning"},{"type":"FactSet","facts":[{"title":"Node","value":"gpu-1"},{"title":"GPU","value":"0"},{"title":"UUID","value":"GPU-a"},{"title":"Product","value":"NVIDIA H100 80GB HBM3"},{"title":"Health","value":"ok"},{"title":"Temperature","value":"86C"},{"title":"ECC errors","value":"0"}]}]}}]}
{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","contentUrl":null,"content":{"$schema":"http://adaptivecards.io/schemas/adaptive-card.json","type":"AdaptiveCard","version":"1.4","body":[{"type":"TextBlock","text":"GPU 0 on node gpu-1: uncorrected ECC errors rose from 0 to 3","wrap":true,"weight":"Bolder","color":"Warning"},{"type":"FactSet","facts":[{"title":"Node","value":"gpu-1"},{"title":"GPU","value":"0"},{"title":"UUID","value":"GPU-a"},{"title":"Product","value":"NVIDIA H100 80GB HBM3"},{"title":"Health","value":"ok"},{"title":"Temperature","value":"60C"},{"title":"ECC errors","value":"3"}]}]}}]}
{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","contentUrl":null,"content":{"$schema":"http://adaptivecards.io/schemas/adaptive-card.json","type":"AdaptiveCard","version":"1.4","body":[{"type":"TextBlock","text":"GPU 0 on node gpu-1 is unhealthy: ecc\\_errors 3 > 0","wrap":true,"weight":"Bolder","color":"Attention"},{"type":"FactSet","facts":[{"title":"Node","value":"gpu-1"},{"title":"GPU","value":"0"},{"title":"UUID","value":"GPU-a"},{"title":"Product","value":"NVIDIA H100 80GB HBM3"},{"title":"Health","value":"unhealthy"},{"title":"Temperature","value":"60C"},{"title":"ECC errors","value":"3"},{"title":"Reasons","value":"ecc\\_errors 3 > 0"}]}]}}]}
{"type":"message","attachments":[{"contentType":"application/vnd.microsoft.card.adaptive","contentUrl":null,"content":{"$schema":"http://adaptivecards.io/schemas/adaptive-card.json","type":"AdaptiveCard","version":"1.4","body":[{"type":"TextBlock","text":"GPU 0 on node gpu-1 recovered: health is warn","wrap":true,"weight":"Bolder","color":"Good"},{"type":"FactSet","facts":[{"title":"Node","value":"gpu-1"},{"title":"GPU","value":"0"},{"title":"UUID","value":"GPU-a"},{"title":"Product","value":"NVIDIA H100 80GB HBM3"},{"title":"Health","value":"warn"},{"title":"Temperature","value":"60C"},{"title":"ECC errors","value":"3"},{"title":"Reasons","value":"power 701W >= 100% of 700W"}]}]}}]}
X

for host in prod-12.westus.logic.azure.com:443 x.webhook.office.com default.env.powerplatform.com. hooks.slack.com 127.0.0.1:9 office.com.evil.example; do
	echo "https://$host/workflows/abc" >"auto-$host.url"
done
check_output '-f auto: teams for .office.com, .logic.azure.com and .powerplatform.com hosts, else slack (-n: nothing posted)' \
	'm=$(mark); for f in auto-*.url; do printf "%s " "$f"; gpu-alert -n -u "$f" four.ndjson | jq -r .format | sort | uniq -c | tr -s " " | tr "\n" " "; echo; done; test "$(mark)" = "$m" && echo nothing posted' <<'X'
auto-127.0.0.1:9.url  4 slack 
auto-default.env.powerplatform.com..url  4 teams 
auto-hooks.slack.com.url  4 slack 
auto-office.com.evil.example.url  4 slack 
auto-prod-12.westus.logic.azure.com:443.url  4 teams 
auto-x.webhook.office.com.url  4 teams 
nothing posted
X

{
	node ADDED gpu-2 "[$(dev GPU-hot 0 warn 95 7 '["temperature 95C >= 85C"]')]"
	node MODIFIED gpu-2 "[$(dev GPU-hot 0 warn 96 7 '["temperature 96C >= 85C"]')]"
} >first.ndjson
m=$(mark)
check_output 'first sight: a hot warn device with ECC errors only records its state: no alert' \
	'gpu-alert -u good.url first.ndjson; echo "exit $?"; since '"$m"' | wc -l' <<'X'
exit 0
0
X
check_output 'first sight of an unhealthy device alerts' \
	'node ADDED gpu-3 "[$(dev GPU-bad 2 unhealthy null null "[\"Xid 79: GPU has fallen off the bus\"]")]" |
	 gpu-alert -u good.url && bodies '"$m"' | jq -r .text' <<'X'
{"kind":"alert","node":"gpu-3","device":"GPU-bad","event":"unhealthy","sent":true,"tries":1}
GPU 2 on node gpu-3 is unhealthy: Xid 79: GPU has fallen off the bus
X

cat >probe.ndjson <<'X'
{"kind":"gpu","node":"h1","index":0,"uuid":"MIG-GPU-1/1/0","name":"NVIDIA A100","product":"NVIDIA A100-SXM4-80GB","memory_mib":9856,"temp_c":50,"ecc_errors":0,"mig":{"profile":"1g.10gb","parent_uuid":"GPU-1","gi":1,"ci":0},"health":"ok","health_reasons":[]}
{"kind":"flush"}
{"kind":"gpu","node":"h1","index":0,"uuid":"MIG-GPU-1/1/0","name":"NVIDIA A100","product":"NVIDIA A100-SXM4-80GB","memory_mib":9856,"temp_c":91,"ecc_errors":0,"mig":{"profile":"1g.10gb","parent_uuid":"GPU-1","gi":1,"ci":0},"health":"unhealthy","health_reasons":["temperature 91C >= 90C"]}
{"kind":"flush"}
X
m=$(mark)
check_output 'gpu records (gpu-probe -i) are read too; a MIG device is named with its profile; -T moves the threshold' \
	'gpu-alert -T 90.5 -u good.url probe.ndjson && bodies '"$m"' | jq -r .text' <<'X'
{"kind":"alert","node":"h1","device":"MIG-GPU-1/1/0","event":"unhealthy","sent":true,"tries":1}
{"kind":"alert","node":"h1","device":"MIG-GPU-1/1/0","event":"temperature","sent":true,"tries":1}
GPU 0 (MIG 1g.10gb) on node h1 is unhealthy: temperature 91C &gt;= 90C
GPU 0 (MIG 1g.10gb) on node h1 is at 91C (threshold 90.5C)
X

# What anyone who may annotate a node can write (health reasons here; a
# product or a node name the same) is escaped for the markup of each
# format and shows as written: no <!channel> for Slack, no link, list or
# emphasis for Teams. -n: the bodies, nothing posted.
HOSTILE='["- <!channel> & <https://evil.example|click> *bold* _it_ ~s~ `c` \\","[x](https://evil.example) #1\n2. two\n  + three"]'
node ADDED gpu-x "[$(dev GPU-x 0 unhealthy 40 0 "$HOSTILE")]" >hostile.ndjson
node ADDED gpu-x "[$(dev GPU-x 0 unhealthy 40 0 '["Xid 79"]')]" >one-x.ndjson
check_output 'Slack: &, < and > of a record as &amp;, &lt; and &gt;, in the text and in the fields' \
	'gpu-alert -n -u good.url hostile.ndjson | jq -r ".body | .text, (.attachments[0].fields[] | select(.title == \"Reasons\") | .value)"' <<'X'
GPU 0 on node gpu-x is unhealthy: - &lt;!channel&gt; &amp; &lt;https://evil.example|click&gt; *bold* _it_ ~s~ `c` \; [x](https://evil.example) #1
2. two
  + three
- &lt;!channel&gt; &amp; &lt;https://evil.example|click&gt; *bold* _it_ ~s~ `c` \
[x](https://evil.example) #1
2. two
  + three
X
check_output 'Teams: a backslash before what Markdown acts on, and before list markers at the start of a line' \
	'gpu-alert -n -f teams -u good.url hostile.ndjson | jq -r ".body.attachments[0].content.body | .[0].text, (.[1].facts[] | select(.title == \"Reasons\") | .value)"' <<'X'
GPU 0 on node gpu-x is unhealthy: - \<!channel> \& \<https://evil.example|click> \*bold\* \_it\_ \~s\~ \`c\` \\; \[x\](https://evil.example) #1
2\. two
  \+ three
\- \<!channel> \& \<https://evil.example|click> \*bold\* \_it\_ \~s\~ \`c\` \\; \[x\](https://evil.example) #1
2\. two
  \+ three
X

# A URL's scheme is any case (RFC 3986): HTTP:// is http://; file:// and
# the other schemes are refused in any case, and never printed.
printf '%s\n' "HTTP://127.0.0.1:$PORT/upper" >upper.url
printf '%s\n' "HtTp://127.0.0.1:$PORT/mixed" >mixed.url
m=$(mark)
check_output 'HTTP:// and HtTp:// are http URLs: delivered' \
	'gpu-alert -u upper.url one-x.ndjson && gpu-alert -u mixed.url one-x.ndjson && since '"$m"' | jq -r .path' <<'X'
{"kind":"alert","node":"gpu-x","device":"GPU-x","event":"unhealthy","sent":true,"tries":1}
{"kind":"alert","node":"gpu-x","device":"GPU-x","event":"unhealthy","sent":true,"tries":1}
/upper
/mixed
X
check_output 'file://, FILE://, Ftp:// and gopher:// are no webhook: named, the URL never printed, exit 1' '
	for u in file:///etc/passwd FILE:///etc/passwd Ftp://127.0.0.1/x gopher://127.0.0.1/x; do
		printf "%s\n" "$u" >scheme.url; gpu-alert -u scheme.url one-x.ndjson 2>&1; echo "exit $?"
	done | sort | uniq -c | sed "s/^ *//"' <<'X'
4 exit 1
4 gpu-alert: file scheme.url: not an http(s) URL: 1 alert dropped
4 gpu-alert: file scheme.url: not an http(s) URL: alerts are dropped until it is there
4 {"kind":"alert","node":"gpu-x","device":"GPU-x","event":"unhealthy","sent":false,"tries":0}
X

BAD='["Xid 48: double bit ECC error"]'
{
	node ADDED gpu-4 "[$(dev GPU-d 0 ok 40 0)]"
	node MODIFIED gpu-4 "[$(dev GPU-d 0 unhealthy 40 0 "$BAD")]"
	node DELETED gpu-4 "[$(dev GPU-d 0 unhealthy 40 0 "$BAD")]"
	node ADDED gpu-4 "[$(dev GPU-d 0 unhealthy 40 0 "$BAD")]"
	node MODIFIED gpu-4 "[$(dev GPU-d 0 unhealthy 40 0 "$BAD")]"
	node MODIFIED gpu-4 "[$(dev GPU-d 0 ok 40 0)]"
	node MODIFIED gpu-4 "[$(dev GPU-d 0 unhealthy 40 0 "$BAD")]"
} >dedup.ndjson
m=$(mark)
check_output 'dedup: the same transition twice (node deleted and added again) is one post; after a recovery it is news again' \
	'gpu-alert -v -u good.url dedup.ndjson 2>err; grep -v "sent (try" err; since '"$m"' | wc -l' <<'X'
{"kind":"alert","node":"gpu-4","device":"GPU-d","event":"unhealthy","sent":true,"tries":1}
{"kind":"alert","node":"gpu-4","device":"GPU-d","event":"recovered","sent":true,"tries":1}
{"kind":"alert","node":"gpu-4","device":"GPU-d","event":"unhealthy","sent":true,"tries":1}
gpu-alert: node gpu-4 device GPU-d: unhealthy alert held back: sent within the last 10 minutes
3
X

ok5=$(for i in 0 1 2 3 4; do dev GPU-r$i $i ok 40 0; echo; done | paste -sd, -)
bad5=$(for i in 0 1 2 3 4; do dev GPU-r$i $i unhealthy 40 0 "$BAD"; echo; done | paste -sd, -)
{ node ADDED gpu-5 "[$ok5]"; node MODIFIED gpu-5 "[$bad5]"; } >rate.ndjson
m=$(mark)
check_output 'rate limit: -r 2 with 5 alerts: 2 posts, 3 dropped (tries 0), a summary on stderr; exit 0' \
	'gpu-alert -r 2 -u good.url rate.ndjson 2>err | sort; echo "exit $?"; cat err; since '"$m"' | jq -r .body.text' <<'X'
{"kind":"alert","node":"gpu-5","device":"GPU-r0","event":"unhealthy","sent":true,"tries":1}
{"kind":"alert","node":"gpu-5","device":"GPU-r1","event":"unhealthy","sent":true,"tries":1}
{"kind":"alert","node":"gpu-5","device":"GPU-r2","event":"unhealthy","sent":false,"tries":0}
{"kind":"alert","node":"gpu-5","device":"GPU-r3","event":"unhealthy","sent":false,"tries":0}
{"kind":"alert","node":"gpu-5","device":"GPU-r4","event":"unhealthy","sent":false,"tries":0}
exit 0
gpu-alert: rate limit of 2 alerts a minute: 3 alerts dropped
GPU 0 on node gpu-5 is unhealthy: Xid 48: double bit ECC error
GPU 1 on node gpu-5 is unhealthy: Xid 48: double bit ECC error
X

node ADDED gpu-6 "[$(dev GPU-x 0 unhealthy 40 0 "$BAD")]" >one.ndjson
m=$(mark)
check_output 'retry: 500 twice, then 200: 3 tries, one delivery, the same body each time' \
	'ctl "{\"fail\":500,\"times\":2}" && gpu-alert -v -u good.url one.ndjson 2>err; cat err;
	 since '"$m"' | jq -c "[.n - $m, .answer]"; bodies '"$m"' | uniq | wc -l' <<'X'
{"kind":"alert","node":"gpu-6","device":"GPU-x","event":"unhealthy","sent":true,"tries":3}
gpu-alert: node gpu-6 device GPU-x: unhealthy alert: try 1: webhook of file good.url: answered 500; next in 1 s
gpu-alert: node gpu-6 device GPU-x: unhealthy alert: try 2: webhook of file good.url: answered 500; next in 2 s
gpu-alert: node gpu-6 device GPU-x: unhealthy alert: sent (try 3)
[1,500]
[2,500]
[3,200]
1
X

m=$(mark)
check_output '429 with Retry-After: 1 is honored (in place of the 2 s backoff of a second try)' \
	'ctl "{\"fail\":503,\"times\":1}" && ctl "{\"fail\":429,\"retry_after\":1}" &&
	 gpu-alert -v -u good.url one.ndjson 2>&1' <<'X'
gpu-alert: node gpu-6 device GPU-x: unhealthy alert: try 1: webhook of file good.url: answered 503; next in 1 s
gpu-alert: node gpu-6 device GPU-x: unhealthy alert: try 2: webhook of file good.url: answered 429; next in 1 s (Retry-After)
gpu-alert: node gpu-6 device GPU-x: unhealthy alert: sent (try 3)
{"kind":"alert","node":"gpu-6","device":"GPU-x","event":"unhealthy","sent":true,"tries":3}
X
m=$(mark)
# (the server logs arrivals rounded to the millisecond: 2 s apart may read 1.999)
check_output '429 with Retry-After: 2 on a first try waits 2 s, not the 1 s backoff' \
	'ctl "{\"fail\":429,\"retry_after\":2}" && gpu-alert -u good.url one.ndjson &&
	 since '"$m"' | jq -cs "[.[0].answer, .[1].answer, .[1].t - .[0].t >= 1.998, .[1].t - .[0].t < 10]"' <<'X'
{"kind":"alert","node":"gpu-6","device":"GPU-x","event":"unhealthy","sent":true,"tries":2}
[429,200,true,true]
X

check_output 'a refused URL: dropped after its tries, the message names the file, never the URL; exit 1' \
	'gpu-alert -R 2 -u refused.url one.ndjson 2>err; echo "exit $?"; cat err; grep -c "$DEAD\|secret\|services" err' <<'X'
{"kind":"alert","node":"gpu-6","device":"GPU-x","event":"unhealthy","sent":false,"tries":2}
exit 1
gpu-alert: node gpu-6 device GPU-x: unhealthy alert dropped after 2 tries: webhook of file refused.url: could not connect
0
X

check_output 'a 404 is not tried again' \
	'ctl "{\"fail\":404}" && gpu-alert -u good.url one.ndjson 2>&1; echo "exit $?"' <<'X'
gpu-alert: node gpu-6 device GPU-x: unhealthy alert dropped after 1 try: webhook of file good.url: answered 404
{"kind":"alert","node":"gpu-6","device":"GPU-x","event":"unhealthy","sent":false,"tries":1}
exit 1
X

# A hanging webhook: the first alert's posts hang (-t 1, -R 2) while the
# reader goes on: a bad line is reported and a later alert queued before
# the first is dropped; the URL is changed meanwhile, and the later alert
# reaches it.
echo "$E/hang" >cur.url
mkfifo feed
m=$(mark)
ctl '{"hang":2}'
gpu-alert -R 2 -t 1 -u cur.url <feed >hang.out 2>hang.err &
alert_pid=$!
exec 5>feed
{
	node ADDED gpu-7 "[$(dev GPU-h 0 ok 40 0),$(dev GPU-i 1 ok 40 0)]"
	node MODIFIED gpu-7 "[$(dev GPU-h 0 unhealthy 40 0 "$BAD"),$(dev GPU-i 1 ok 40 0)]"
} >&5
check 'the first alert'\''s post hangs' 'eventually 10 grep -q "\"answer\": \"hang\"" hook.log'
echo "$E/good" >cur.url
{
	echo '{"type":"MODIFIED","object":'
	node MODIFIED gpu-7 "[$(dev GPU-h 0 unhealthy 40 0 "$BAD"),$(dev GPU-i 1 unhealthy 40 0 "$BAD")]"
} >&5
check_output 'reading goes on while the webhook hangs: record 3 reported before the first alert is dropped' \
	'eventually 5 test -s hang.err; cat hang.err; cat hang.out' <<'X'
gpu-alert: <stdin>:3: invalid JSON at column 28: unexpected token near end of file
X
exec 5>&-
wait $alert_pid
echo "exit $?" >>hang.out
check_output 'the hanging alert is dropped after 2 tries of 1 s; the later one reaches the new URL' \
	'cat hang.out hang.err; since '"$m"' | jq -c "[.path, .answer, .body.text]"' <<'X'
{"kind":"alert","node":"gpu-7","device":"GPU-h","event":"unhealthy","sent":false,"tries":2}
{"kind":"alert","node":"gpu-7","device":"GPU-i","event":"unhealthy","sent":true,"tries":1}
exit 1
gpu-alert: <stdin>:3: invalid JSON at column 28: unexpected token near end of file
gpu-alert: node gpu-7 device GPU-h: unhealthy alert dropped after 2 tries: webhook of file cur.url: timed out after 1 s
["/hang","hang","GPU 0 on node gpu-7 is unhealthy: Xid 48: double bit ECC error"]
["/hang","hang","GPU 0 on node gpu-7 is unhealthy: Xid 48: double bit ECC error"]
["/good",200,"GPU 1 on node gpu-7 is unhealthy: Xid 48: double bit ECC error"]
X

{
	echo 'not json'
	echo '[1,2]'
	echo '{"type":"MODIFIED","object":{"kind":"Node","metadata":{}}}'
	echo '{"type":"MODIFIED","object":{"kind":"Node","metadata":{"name":"gpu-8","annotations":{"agentaflow.gpu/devices":"[{"}}}}'
	echo '{"type":"MODIFIED","object":{"kind":"Node","metadata":{"name":"gpu-8","annotations":{"agentaflow.gpu/devices":7}}}}'
	node ADDED gpu-8 "[$(dev GPU-m 0 ok 40 0),{\"index\":1},$(dev GPU-n 2 sick 40 0)]"
	node MODIFIED gpu-8 "[$(dev GPU-m 0 ok '"hot"' 0),$(dev GPU-n 2 ok 40 -1)]"
	echo '{"kind":"gpu","uuid":"GPU-z"}'
	echo '{"type":"BOOKMARK","object":{"kind":"Node","metadata":{"resourceVersion":"9"}}}'
	echo '{"type":"SYNCED"}'
	echo '{"type":"ERROR","object":{"kind":"Status"}}'
	echo
	node MODIFIED gpu-8 "[$(dev GPU-m 0 unhealthy 40 0 "$BAD"),$(dev GPU-n 2 ok 40 0)]"
} >bad.ndjson
m=$(mark)
check_output 'bad records are named by number and skipped; the good ones after them still alert; exit 1' \
	'gpu-alert -u good.url bad.ndjson; echo "exit $?"' <<'X'
{"kind":"alert","node":"gpu-8","device":"GPU-m","event":"unhealthy","sent":true,"tries":1}
exit 1
X
check_output 'each bad record named' 'gpu-alert -u good.url bad.ndjson 2>&1 >/dev/null' <<'X'
gpu-alert: bad.ndjson:1: invalid JSON at column 3: invalid token near 'not'
gpu-alert: bad.ndjson:2: not a Node watch event or a gpu record
gpu-alert: bad.ndjson:3: MODIFIED event: object: no metadata.name
gpu-alert: bad.ndjson:4: node gpu-8: annotation agentaflow.gpu/devices: not a JSON array
gpu-alert: bad.ndjson:5: node gpu-8: annotation agentaflow.gpu/devices: not a string
gpu-alert: bad.ndjson:6: node gpu-8: annotation agentaflow.gpu/devices[1]: uuid: not a non-empty string
gpu-alert: bad.ndjson:6: node gpu-8: annotation agentaflow.gpu/devices[2]: health: not ok, warn or unhealthy
gpu-alert: bad.ndjson:7: node gpu-8: annotation agentaflow.gpu/devices[0]: temp_c: not a number
gpu-alert: bad.ndjson:7: node gpu-8: annotation agentaflow.gpu/devices[1]: ecc_errors: not a whole number
gpu-alert: bad.ndjson:8: gpu record: node: not a non-empty string
gpu-alert: bad.ndjson:11: not a Node watch event or a gpu record
gpu-alert: bad.ndjson:12: blank line
X

# A Node as the API server sends it: its labels, spec and status are left
# unread (still checked: a bad token there makes a bad record, named as
# any is), and an event whose devices annotation is the same as the last
# good one of its node is passed over. A gpu record of the node, or the
# node deleted, makes its next annotation a reading anew: GPU-s recovers
# by a gpu record, so the same unhealthy annotation after it is news; and
# after the node is deleted and added again with it, it is held back.
whole() {
	jq -cn --arg t "$1" --arg n "$2" --argjson d "$3" \
		'{type: $t, object: {apiVersion: "v1", kind: "Node",
		  metadata: {name: $n, labels: {"kubernetes.io/hostname": $n, zone: "z1"},
		    annotations: {"agentaflow.gpu/devices": ($d | tojson), "node.alpha.kubernetes.io/ttl": "0"}},
		  spec: {taints: []},
		  status: {conditions: [{type: "Ready", status: "True"}], nodeInfo: {kubeletVersion: "v1.34.4"}}}}'
}
SICK=$(dev GPU-s 0 unhealthy 40 0 "$BAD")
{
	whole ADDED gpu-9 "[$(dev GPU-s 0 ok 40 0)]"
	whole MODIFIED gpu-9 "[$SICK]"
	whole MODIFIED gpu-9 "[$SICK]"
	echo '{"kind":"gpu","node":"gpu-9","index":0,"uuid":"GPU-s","health":"ok"}'
	whole MODIFIED gpu-9 "[$SICK]"
	echo '{"type":"MODIFIED","object":{"metadata":{"name":"gpu-9","labels":{"zone":tru}}}}'
	whole DELETED gpu-9 "[$SICK]"
	whole ADDED gpu-9 "[$SICK]"
	whole MODIFIED gpu-9 "[$SICK]"
} >same.ndjson
m=$(mark)
check_output 'a whole Node: the same annotation again is passed over; a gpu record or a deletion between makes it a reading again' \
	'gpu-alert -v -u good.url same.ndjson 2>err; echo "exit $?"; grep -v "sent (try" err; since '"$m"' | wc -l' <<'X'
{"kind":"alert","node":"gpu-9","device":"GPU-s","event":"unhealthy","sent":true,"tries":1}
{"kind":"alert","node":"gpu-9","device":"GPU-s","event":"recovered","sent":true,"tries":1}
{"kind":"alert","node":"gpu-9","device":"GPU-s","event":"unhealthy","sent":true,"tries":1}
exit 1
gpu-alert: same.ndjson:6: invalid JSON at column 76: invalid token near 'tru'
gpu-alert: node gpu-9 device GPU-s: unhealthy alert held back: sent within the last 10 minutes
3
X

m=$(mark)
check_output '-1 posts one test message and exits 0' \
	'NODE_NAME=ctl-1 gpu-alert -1 -u good.url && bodies '"$m"'' <<'X'
{"kind":"alert","node":"ctl-1","device":null,"event":"test","sent":true,"tries":1}
{"text":"gpu-alert test message: this webhook receives GPU alerts from ctl-1","attachments":[{"color":"good","fields":[{"title":"Node","value":"ctl-1","short":true}]}]}
X
check_output '-1 with no answer exits 75; with no URL file 1, naming it' \
	'NODE_NAME=x gpu-alert -1 -R 1 -u refused.url >/dev/null 2>&1; echo "exit $?";
	 NODE_NAME=x gpu-alert -1 -u nofile.url 2>&1; echo "exit $?"' <<'X'
exit 75
gpu-alert: file nofile.url: No such file or directory: alerts are dropped until it is there
{"kind":"alert","node":"x","device":null,"event":"test","sent":false,"tries":0}
gpu-alert: file nofile.url: No such file or directory: 1 alert dropped
exit 1
X

# The Secret through an API server: alertserve answers GET
# /api/v1/namespaces/ns1/secrets/alert-webhook with secret.json.
cat >kubeconfig <<X
apiVersion: v1
kind: Config
current-context: t
contexts:
- {name: t, context: {cluster: t, user: u, namespace: ns1}}
clusters:
- {name: t, cluster: {server: "$E"}}
users:
- {name: u, user: {token: not-a-real-token}}
X
secret() { printf '{"apiVersion":"v1","kind":"Secret","metadata":{"name":"alert-webhook","namespace":"ns1"},"data":%s}' "$1" >secret.json; }
two=$(node ADDED gpu-9 "[$(dev GPU-s 0 unhealthy 40 0 "$BAD"),$(dev GPU-t 1 unhealthy 40 0 "$BAD")]")
m=$(mark)
check_output 'no such Secret: one message naming it, alerts dropped and counted, exit 1' \
	'echo "$two" | POD_NAMESPACE=ns1 gpu-alert --kubeconfig kubeconfig 2>&1; echo "exit $?"' <<'X'
gpu-alert: secret ns1/alert-webhook: not found: alerts are dropped until it is there
{"kind":"alert","node":"gpu-9","device":"GPU-s","event":"unhealthy","sent":false,"tries":0}
{"kind":"alert","node":"gpu-9","device":"GPU-t","event":"unhealthy","sent":false,"tries":0}
gpu-alert: secret ns1/alert-webhook: not found: 2 alerts dropped
exit 1
X
secret '{"other":"eA=="}'
check_output 'a Secret without the key: the message names the Secret and the key' \
	'echo "$two" | gpu-alert --kubeconfig kubeconfig -s ns1/alert-webhook 2>&1 >/dev/null' <<'X'
gpu-alert: secret ns1/alert-webhook: no key webhook-url: alerts are dropped until it is there
gpu-alert: secret ns1/alert-webhook: no key webhook-url: 2 alerts dropped
X
secret "{\"webhook-url\":\"$(printf '%s/from-secret\n' "$E" | base64 -w0)\"}"
m=$(mark)
check_output 'with the key (a trailing newline dropped): delivered; the Secret read once for both alerts' \
	'echo "$two" | POD_NAMESPACE=ns1 gpu-alert --kubeconfig kubeconfig -s alert-webhook 2>&1 && since '"$m"' | jq -r "[.path // .get, .get // .body.text] | join(\" \")"' <<'X'
{"kind":"alert","node":"gpu-9","device":"GPU-s","event":"unhealthy","sent":true,"tries":1}
{"kind":"alert","node":"gpu-9","device":"GPU-t","event":"unhealthy","sent":true,"tries":1}
/api/v1/namespaces/ns1/secrets/alert-webhook /api/v1/namespaces/ns1/secrets/alert-webhook
/from-secret GPU 0 on node gpu-9 is unhealthy: Xid 48: double bit ECC error
/from-secret GPU 1 on node gpu-9 is unhealthy: Xid 48: double bit ECC error
X
secret "{\"webhook-url\":\"$(printf 'hooks.slack.com/x' | base64 -w0)\"}"
check_output 'a key that holds no http(s) URL: named, the value never printed' \
	'echo "$two" | gpu-alert --kubeconfig kubeconfig -s ns1/alert-webhook 2>&1 >/dev/null' <<'X'
gpu-alert: secret ns1/alert-webhook key webhook-url: not an http(s) URL: alerts are dropped until it is there
gpu-alert: secret ns1/alert-webhook key webhook-url: not an http(s) URL: 2 alerts dropped
X

# -S: what was told of each device's health, kept in a ConfigMap that
# alertserve keeps (GET, POST, merge PATCH on resourceVersion), so that a
# restart tells nothing twice.
secret "{\"webhook-url\":\"$(printf '%s/hook' "$E" | base64 -w0)\"}"
CM=$E/api/v1/namespaces/ns1/configmaps
# ops: the webhook posts and the ConfigMap requests since mark $1
ops() {
	since "$1" | jq -r 'if .n > 0 then "POST \(.path) \(.body.text)"
		else . as $r | to_entries | map(select(.key | IN("get", "post", "patch"))) | .[0]
		| select(.value | test("secrets") | not)
		| "\(.key | ascii_upcase) \(.value)\(if .key == "patch" then " " + ($r.body.data | tojson) else "" end)" end' |
		sed 's/\\"since[^}]*}"}/…}/g'
}
# state: the ConfigMap's data, each value's since checked for its form
state() {
	curl -sf --noproxy '*' "$CM/gpu-alert-state" | jq -cS '.data | map_values(fromjson
		| "\(.state) \(.since | test("^20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]Z$"))")'
}
alert_s() { gpu-alert --kubeconfig kubeconfig -s ns1/alert-webhook -S "$@"; }
m=$(mark)
check_output 'no ConfigMap yet: both unhealthy devices told, the ConfigMap made on the first, patched on the second' \
	'echo "$two" | alert_s ns1/gpu-alert-state >/dev/null && ops '"$m"' && state' <<'X'
GET /api/v1/namespaces/ns1/configmaps/gpu-alert-state
POST /hook GPU 0 on node gpu-9 is unhealthy: Xid 48: double bit ECC error
POST /api/v1/namespaces/ns1/configmaps
POST /hook GPU 1 on node gpu-9 is unhealthy: Xid 48: double bit ECC error
PATCH /api/v1/namespaces/ns1/configmaps/gpu-alert-state {"gpu-9_GPU-t":"{\"state\":\"unhealthy\",…}
{"gpu-9_GPU-s":"unhealthy true","gpu-9_GPU-t":"unhealthy true"}
X
m=$(mark)
check_output 'a restart (POD_NAMESPACE, no namespace in -S): the same devices still unhealthy are not told again' \
	'echo "$two" | POD_NAMESPACE=ns1 alert_s gpu-alert-state; echo "exit $?"; ops '"$m"'' <<'X'
exit 0
GET /api/v1/namespaces/ns1/configmaps/gpu-alert-state
X
three=$(node ADDED gpu-9 "[$(dev GPU-s 0 ok 40 0),$(dev GPU-t 1 unhealthy 40 0 "$BAD"),$(dev GPU-u 2 unhealthy 40 0 "$BAD")]")
m=$(mark)
check_output 'changed while down: the one recovered told and removed, the new unhealthy one told and kept, the still unhealthy one not' \
	'echo "$three" | alert_s ns1/gpu-alert-state && ops '"$m"' && state' <<'X'
{"kind":"alert","node":"gpu-9","device":"GPU-s","event":"recovered","sent":true,"tries":1}
{"kind":"alert","node":"gpu-9","device":"GPU-u","event":"unhealthy","sent":true,"tries":1}
GET /api/v1/namespaces/ns1/configmaps/gpu-alert-state
POST /hook GPU 0 on node gpu-9 recovered: health is ok
PATCH /api/v1/namespaces/ns1/configmaps/gpu-alert-state {"gpu-9_GPU-s":null}
POST /hook GPU 2 on node gpu-9 is unhealthy: Xid 48: double bit ECC error
PATCH /api/v1/namespaces/ns1/configmaps/gpu-alert-state {"gpu-9_GPU-u":"{\"state\":\"unhealthy\",…}
{"gpu-9_GPU-t":"unhealthy true","gpu-9_GPU-u":"unhealthy true"}
X
m=$(mark)
check_output 'a write that crossed another (409): the ConfigMap read again, the write made again' \
	'ctl "{\"conflict\":1}" && echo "$two" | alert_s ns1/gpu-alert-state >/dev/null && ops '"$m"' && state' <<'X'
GET /api/v1/namespaces/ns1/configmaps/gpu-alert-state
POST /hook GPU 0 on node gpu-9 is unhealthy: Xid 48: double bit ECC error
PATCH /api/v1/namespaces/ns1/configmaps/gpu-alert-state {"gpu-9_GPU-s":"{\"state\":\"unhealthy\",…}
GET /api/v1/namespaces/ns1/configmaps/gpu-alert-state
PATCH /api/v1/namespaces/ns1/configmaps/gpu-alert-state {"gpu-9_GPU-s":"{\"state\":\"unhealthy\",…}
{"gpu-9_GPU-s":"unhealthy true","gpu-9_GPU-t":"unhealthy true","gpu-9_GPU-u":"unhealthy true"}
X
m=$(mark)
check_output 'a dropped alert (404 from the webhook) is kept too: it was tried' \
	'ctl "{\"fail\":404}" && echo "$(node ADDED gpu-7 "[$(dev GPU-d 0 unhealthy 40 0)]")" | alert_s ns1/gpu-alert-state 2>&1; ops '"$m"' && state | jq -c "{\"gpu-7_GPU-d\"}"' <<'X'
gpu-alert: node gpu-7 device GPU-d: unhealthy alert dropped after 1 try: webhook of secret ns1/alert-webhook key webhook-url: answered 404
{"kind":"alert","node":"gpu-7","device":"GPU-d","event":"unhealthy","sent":false,"tries":1}
GET /api/v1/namespaces/ns1/configmaps/gpu-alert-state
POST /hook GPU 0 on node gpu-7 is unhealthy
PATCH /api/v1/namespaces/ns1/configmaps/gpu-alert-state {"gpu-7_GPU-d":"{\"state\":\"unhealthy\",…}
{"gpu-7_GPU-d":"unhealthy true"}
X
curl -sf --noproxy '*' -o /dev/null -X PATCH -H 'Content-Type: application/merge-patch+json' \
	--data '{"data":{"log-level":"debug"}}' "$CM/gpu-alert-state"
m=$(mark)
check_output 'a key not of gpu-alert: named, and every unhealthy device told again rather than one lost' \
	'echo "$two" | alert_s ns1/gpu-alert-state 2>&1 >/dev/null && ops '"$m"'' <<'X'
gpu-alert: configmap ns1/gpu-alert-state: key log-level: not gpu-alert's state of a device; starting without it
GET /api/v1/namespaces/ns1/configmaps/gpu-alert-state
POST /hook GPU 0 on node gpu-9 is unhealthy: Xid 48: double bit ECC error
PATCH /api/v1/namespaces/ns1/configmaps/gpu-alert-state {"gpu-9_GPU-s":"{\"state\":\"unhealthy\",…}
POST /hook GPU 1 on node gpu-9 is unhealthy: Xid 48: double bit ECC error
PATCH /api/v1/namespaces/ns1/configmaps/gpu-alert-state {"gpu-9_GPU-t":"{\"state\":\"unhealthy\",…}
X
m=$(mark)
check_output 'no API server: said, and alerts go on from an empty state' \
	'sed "s|$E|http://127.0.0.1:$DEAD|" kubeconfig >dead.kubeconfig && echo "$two" | gpu-alert --kubeconfig dead.kubeconfig -R 1 -S x 2>&1 >/dev/null |
		sed "s| http://127.0.0.1:$DEAD/| /|; s|: Failed to connect.*; starting|; starting|; s|: Failed to connect.*||"' <<'X'
gpu-alert: configmap canhazgpu-system/x: GET /api/v1/namespaces/canhazgpu-system/configmaps/x; starting without it
gpu-alert: node gpu-9 device GPU-s: unhealthy alert dropped after 1 try: secret canhazgpu-system/alert-webhook: GET /api/v1/namespaces/canhazgpu-system/secrets/alert-webhook
gpu-alert: configmap canhazgpu-system/x: key gpu-9_GPU-s not saved: POST /api/v1/namespaces/canhazgpu-system/configmaps
gpu-alert: node gpu-9 device GPU-t: unhealthy alert dropped after 1 try: secret canhazgpu-system/alert-webhook: GET /api/v1/namespaces/canhazgpu-system/secrets/alert-webhook
gpu-alert: configmap canhazgpu-system/x: key gpu-9_GPU-t not saved: POST /api/v1/namespaces/canhazgpu-system/configmaps
X

# The PrometheusRule reads only metrics that exist: those gpu-probe -P
# writes and those the controller's man page lists.
cat >probe.csv <<'X'
0, GPU-m, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 81559, 1, 0, 31, 69.54, 700.00, 0, 550.90.07, Disabled, 9.0
X
check_output 'manifests/monitoring: every metric a rule reads is one gpu-probe -P or the controller exports' \
	'gpu-probe -N n -r probe.csv -P probe.prom >/dev/null 2>&1
	 { sed -n "s/^\(k8shazgpu_[a-z_]*\).*/\1/p" probe.prom
	   sed -n "s/^\.Li \(\(agentaflow\|warp\|k8shazgpu\)_[a-z_]*\).*/\1/p" "$TOP/man/k8shazgpu-controller.8"; } | sort -u >known
	 yaml2json -s "$TOP/manifests/monitoring/prometheusrule.yaml" | jq -r ".spec.groups[].rules[].expr" |
		grep -o "\(agentaflow\|warp\|k8shazgpu\)_[a-z_]*" | sed "s/_bucket$//" | sort -u >used
	 cat used; echo "unknown:"; comm -23 used known' <<'X'
agentaflow_gpu_available
agentaflow_workloads_pending
k8shazgpu_controller_writes_total
k8shazgpu_gpu_ecc_errors
k8shazgpu_gpu_health
k8shazgpu_gpu_memory_total_mib
k8shazgpu_gpu_memory_used_mib
k8shazgpu_gpu_temperature_celsius
warp_gpuworkload_failed_total
warp_gpuworkload_reconcile_duration_seconds
unknown:
X
check_output 'manifests/monitoring: each ServiceMonitor finds a Service of its namespace by label and port' \
	'yaml2json -s "$TOP/manifests/monitoring/servicemonitor.yaml" | jq -rs "
		(map(select(.kind == \"Service\"))) as \$svc | .[] | select(.kind == \"ServiceMonitor\") | . as \$m
		| [\$m.metadata.name, (\$svc[] | select(.metadata.namespace == \$m.spec.namespaceSelector.matchNames[0]
			and (.metadata.labels | contains(\$m.spec.selector.matchLabels))
			and any(.spec.ports[]; .name == \$m.spec.endpoints[0].port)) | .metadata.name)] | join(\" \")"' <<'X'
canhazgpu-controller canhazgpu-controller-monitoring
canhazgpu-nodeagent canhazgpu-nodeagent-monitoring
X

# A real cluster's Secret, when a k8shazgpu-sim cluster is up (t/run with
# a 9xxx test, or K8SHAZGPU_SIM_DIR set); none is started here.
if [ -n "${K8SHAZGPU_SIM_DIR:-}" ] && [ -f "$K8SHAZGPU_SIM_DIR/state" ]; then
	KC=$K8SHAZGPU_SIM_DIR/kubeconfig
	kubectl=$("$TOP/scripts/sim-build" bindir)/kubectl
	NS=gpu-alert-t$$
	trap 'kill $serve_pid 2>/dev/null; "$kubectl" --kubeconfig "$KC" delete ns "$NS" --wait=false >/dev/null 2>&1' EXIT
	"$kubectl" --kubeconfig "$KC" create ns "$NS" >/dev/null
	m=$(mark)
	check_output 'a real cluster: no Secret, then one without the key, then with it' \
		'echo "$two" | gpu-alert --kubeconfig "$KC" -s "$NS/alert-webhook" 2>&1 >/dev/null | sed "s/$NS/NS/"
		 "$kubectl" --kubeconfig "$KC" -n "$NS" create secret generic alert-webhook --from-literal=other=x >/dev/null
		 echo "$two" | gpu-alert --kubeconfig "$KC" -s "$NS/alert-webhook" 2>&1 >/dev/null | sed "s/$NS/NS/"
		 "$kubectl" --kubeconfig "$KC" -n "$NS" delete secret alert-webhook >/dev/null
		 "$kubectl" --kubeconfig "$KC" -n "$NS" create secret generic alert-webhook --from-literal=webhook-url="$E/real" >/dev/null
		 echo "$two" | POD_NAMESPACE=$NS gpu-alert --kubeconfig "$KC" && bodies '"$m"' | jq -r .text' <<'X'
gpu-alert: secret NS/alert-webhook: not found: alerts are dropped until it is there
gpu-alert: secret NS/alert-webhook: not found: 2 alerts dropped
gpu-alert: secret NS/alert-webhook: no key webhook-url: alerts are dropped until it is there
gpu-alert: secret NS/alert-webhook: no key webhook-url: 2 alerts dropped
{"kind":"alert","node":"gpu-9","device":"GPU-s","event":"unhealthy","sent":true,"tries":1}
{"kind":"alert","node":"gpu-9","device":"GPU-t","event":"unhealthy","sent":true,"tries":1}
GPU 0 on node gpu-9 is unhealthy: Xid 48: double bit ECC error
GPU 1 on node gpu-9 is unhealthy: Xid 48: double bit ECC error
X
else
	t_result 0 'a real cluster'\''s Secret # SKIP no k8shazgpu-sim cluster up (K8SHAZGPU_SIM_DIR)'
fi

done_testing
