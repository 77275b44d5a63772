#!/bin/sh
# status-page: the page of a known state is exact, every string of it
# escaped (a hostile name adds no markup, in the text or in Chromium's
# DOM), with no external reference; durations; bad input; the server:
# one gather a request, a gather that fails, prints no JSON or hangs
# named on the page, /healthz, 404, 405, TERM. k8shazgpu web with the API
# server unreachable, and k8shazgpu host web on a real Redis ledger and
# with it down: the page names what is missing. Headless Chromium: the
# page's text is exact, and a phone-sized screenshot is taken. No cluster.
. "$(dirname "$0")/lib.sh"

F=$FIXTURES/status-page
# text: a page (Chromium's DOM or ours) as its visible text: cells
# separated by two blanks, the entities read, no blank line
text() {
	sed -n '/<body>/,/<\/body>/p' | sed -e 's#</t[dh]>#  #g' -e 's/<[^>]*>//g' \
		-e 's/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&#39;/'"'"'/g; s/&nbsp;/ /g; s/&amp;/\&/g' \
		-e 's/ *$//' | grep -v '^$'
}
# chrome ARGS: headless Chromium, quiet, in a profile of its own
chrome() {
	chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
		--disable-background-networking --disable-component-update --disable-sync \
		--user-data-dir="$(mktemp -d "$SCRATCH/chrome.XXXXXX")" "$@" 2>>chrome.err
}

check_output 'the page of a known state, exact: every string escaped' "status-page $F/state.json" <<'EOF'
<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="10">
<title>lab &lt;script&gt;alert(1)&lt;/script&gt; &amp; co</title>
<style>
body{font:15px/1.4 system-ui,sans-serif;margin:0 auto;max-width:60em;padding:.5em;color:#111;background:#fff}
h1{font-size:1.3em;margin:.3em 0}h2{font-size:1.1em;margin:1.2em 0 .3em}
p{margin:.3em 0}.when,.sub,.free{color:#555}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;padding:.3em .4em;border-bottom:1px solid #ddd;vertical-align:top;overflow-wrap:break-word}
th{font-weight:600;border-bottom:2px solid #999}
.mig td:first-child{padding-left:1.5em}
.missing{background:#fde2e1;border:1px solid #c62828;padding:.5em;margin:.5em 0;font-weight:600}
.ok{color:#1b6e2c}.warn{color:#8a5a00}.bad{color:#b00020;font-weight:600}
</style>
</head>
<body>
<h1>lab &lt;script&gt;alert(1)&lt;/script&gt; &amp; co</h1>
<p class="when">as of 2026-11-18 11:06:40 UTC, refreshed every 10 s</p>
<p class="missing">Missing: the API server: unreachable</p>
<p class="missing">Missing: node gpu-b: the ledger (Redis) &lt;i&gt;down&lt;/i&gt;</p>
<p class="sum">3 nodes, 4 GPUs and 2 MIG devices: 1 free, 4 held, 1 unhealthy</p>
<section>
<h2>node gpu-a <span class="ok">Ready</span></h2>
<p class="sub">NVIDIA H200, NVIDIA H100 &lt;80GB&gt;; published 15s ago</p>
<table>
<thead><tr><th>Device</th><th>Health</th><th>Held by, for how long</th></tr></thead>
<tbody>
<tr><td>GPU 0</td><td class="ok">ok</td><td>pod team/train-0 (claim train-0-gpu) for 45s</td></tr>
<tr><td>GPU 1</td><td class="warn">warn: temperature 86 C</td><td>host alice&quot;&gt;&lt;img src=x onerror=alert(1)&gt; (manual, it&#39;s &lt;b&gt;mine&lt;/b&gt;) for 3h 05m</td></tr>
<tr class="mig"><td>GPU 2 MIG 1g.18gb</td><td class="ok">ok</td><td>workload ml/llama (running) for 2d 4h</td></tr>
<tr class="mig"><td>GPU 2 MIG 3g.71gb</td><td class="bad">unhealthy: ECC errors: 12; XID 79</td><td><span class="free">free</span></td></tr>
<tr><td>GPU 3</td><td class="ok">ok</td><td>host bob (run) for 0s; claim team/spare</td></tr>
</tbody>
</table>
</section>
<section>
<h2>node gpu-b�&lt;x&gt; next <span class="bad">NotReady</span></h2>
<p>no GPUs</p>
</section>
<section>
<h2>node gpu-c</h2>
<p class="sub">NVIDIA L4</p>
<table>
<thead><tr><th>Device</th><th>Health</th><th>Held by, for how long</th></tr></thead>
<tbody>
<tr><td>GPU 0</td><td></td><td><span class="free">free</span></td></tr>
</tbody>
</table>
</section>
<section>
<h2>Queue</h2>
<table>
<thead><tr><th>Waiting</th><th>Wants</th><th>For</th></tr></thead>
<tbody>
<tr><td>workload ml/big</td><td>8 GPUs</td><td>12m</td></tr>
<tr><td>pod team/eval</td><td>claims a, b</td><td>45s</td></tr>
<tr><td>host carol</td><td>GPUs 1, 3</td><td></td></tr>
</tbody>
</table>
</section>
</body>
</html>
EOF

check_output 'no external reference: no URL, no src, no href, no import' \
	"status-page $F/state.json | grep -i -c -E 'https?:|//|src=[^x]|href|@import|url\\(|<script|<link|<img'" <<'EOF'
0
EOF

check_output '-r 0: no refresh; -r 30: every 30 s' "
	status-page -r 0 $F/state.json | sed -n '5,6p;/class=\"when\"/p'
	status-page -r 30 <$F/state.json | sed -n '6p;/class=\"when\"/p'" <<'EOF'
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>lab &lt;script&gt;alert(1)&lt;/script&gt; &amp; co</title>
<p class="when">as of 2026-11-18 11:06:40 UTC</p>
<meta http-equiv="refresh" content="30">
<p class="when">as of 2026-11-18 11:06:40 UTC, refreshed every 30 s</p>
EOF

check_output 'an empty state: no GPU nodes, nothing waits, the default title' \
	"echo '{\"now\": 0}' | status-page -r 0 | text" <<'EOF'
k8shazgpu status
as of 1970-01-01 00:00:00 UTC
0 nodes, 0 GPUs: 0 free, 0 held, 0 unhealthy
no GPU nodes
Queue
nothing waits
EOF

check_output 'bad input: invalid JSON, no object, a missing file (1); usage (2)' '
	printf "{\"now\": 1,\n" >bad.json
	out status-page bad.json; echo "[]" | out status-page; out status-page nope.json
	out status-page a b; out status-page -r x; out status-page -l 127.0.0.1:0' <<'EOF'
exit 1
status-page: bad.json:2: invalid JSON: string or '}' expected near end of file
exit 1
status-page: <stdin>: the state is no JSON object
exit 1
status-page: unable to open nope.json: No such file or directory
exit 2
usage: status-page [-r seconds] [file]
       status-page -l addr:port [-r seconds] [-T seconds] -- command [arg ...]
exit 2
status-page: -r: not a number of seconds: x
exit 2
usage: status-page [-r seconds] [file]
       status-page -l addr:port [-r seconds] [-T seconds] -- command [arg ...]
EOF

# ---- the server: one gather a request ----

# gather: the state, or as ./mode says: fail (status 3), junk, hang
cat >gather <<EOF
#!/bin/sh
case \$(cat mode) in
ok) cat "$F/state.json" ;;
fail) echo "gather: no luck" >&2; exit 3 ;;
junk) echo "<html>" ;;
array) echo "[]" ;;
hang) sleep 30 & echo \$! >sleep.pid; wait ;;
esac
EOF
chmod +x gather
echo ok >mode
# dead PID: no such process, or only its zombie
dead() { ! [ -d "/proc/$1" ] || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }
status-page -l 127.0.0.1:0 -r 5 -T 1 -- ./gather >serve.out 2>serve.err &
spid=$!
eventually 10 grep -q serving serve.out
port=$(sed -n 's|^serving http://127.0.0.1:\([0-9]*\)/$|\1|p' serve.out)
# get PATH: the body, then the status
get() { curl -s --max-time 5 -w '%{http_code}\n' "http://127.0.0.1:$port$1"; }

check_output 'GET /: the page of what the command printed, as text/html' '
	curl -s -D hdr -o page.html "http://127.0.0.1:$port/" &&
	tr -d "\r" <hdr | grep -i "^HTTP\|^Content-Type"
	status-page -r 5 "$F/state.json" | cmp - page.html && echo same page' <<'EOF'
HTTP/1.1 200 OK
Content-Type: text/html; charset=utf-8
same page
EOF

check_output 'a gather that fails, prints no JSON or no object, or hangs past -T (killed, with what it started): named on the page' '
	for m in fail junk array hang; do echo $m >mode; get / | grep "Missing\|^[0-9]"; done; echo ok >mode
	eventually 5 dead "$(cat sleep.pid)" && echo "its sleep is gone"' <<'EOF'
<p class="missing">Missing: the state: ./gather: exit status 3</p>
200
<p class="missing">Missing: the state: ./gather: no state: &#39;[&#39; or &#39;{&#39; expected near &#39;&lt;&#39;</p>
200
<p class="missing">Missing: the state: ./gather: no state: no JSON object</p>
200
<p class="missing">Missing: the state: ./gather: still running after 1 s</p>
200
its sleep is gone
EOF

check_output '/healthz, 404, 405' 'get /healthz; get /nope; curl -s -X POST -w "%{http_code}\n" "http://127.0.0.1:$port/"' <<'EOF'
ok
200
not found
404
method not allowed
405
EOF

kill -TERM $spid
wait $spid
sst=$?
check_output 'TERM: stopped, status 0; what failed was told on stderr' 'echo "exit $sst"; cat serve.err' <<'EOF'
exit 0
gather: no luck
status-page: ./gather: exit status 3
status-page: ./gather: no state: '[' or '{' expected near '<'
status-page: ./gather: no state: no JSON object
status-page: ./gather: still running after 1 s
EOF

check_output 'an address that cannot be bound: 1' '
	out status-page -l 192.0.2.1:1 -- true | sed "s/: [^:]*$/: WHY/"' <<'EOF'
exit 1
status-page: 192.0.2.1:1: cannot listen: WHY
EOF

# ---- in Chromium ----

status-page -r 0 "$F/state.json" >page.html
check_output 'Chromium: the text of the page, exact; what looked like markup is text' '
	chrome --dump-dom "file://$SCRATCH/page.html" >dom.html && text <dom.html' <<'EOF'
lab <script>alert(1)</script> & co
as of 2026-11-18 11:06:40 UTC
Missing: the API server: unreachable
Missing: node gpu-b: the ledger (Redis) <i>down</i>
3 nodes, 4 GPUs and 2 MIG devices: 1 free, 4 held, 1 unhealthy
node gpu-a Ready
NVIDIA H200, NVIDIA H100 <80GB>; published 15s ago
Device  Health  Held by, for how long
GPU 0  ok  pod team/train-0 (claim train-0-gpu) for 45s
GPU 1  warn: temperature 86 C  host alice"><img src=x onerror=alert(1)> (manual, it's <b>mine</b>) for 3h 05m
GPU 2 MIG 1g.18gb  ok  workload ml/llama (running) for 2d 4h
GPU 2 MIG 3g.71gb  unhealthy: ECC errors: 12; XID 79  free
GPU 3  ok  host bob (run) for 0s; claim team/spare
node gpu-b�<x> next NotReady
no GPUs
node gpu-c
NVIDIA L4
Device  Health  Held by, for how long
GPU 0    free
Queue
Waiting  Wants  For
workload ml/big  8 GPUs  12m
pod team/eval  claims a, b  45s
host carol  GPUs 1, 3
EOF

check_output "Chromium's DOM: no element but the page's own" '
	sed -n "/<body>/,\$p" dom.html | grep -o "<[a-z][a-z0-9]*" | sort | uniq -c | awk "{print \$2, \$1}"' <<'EOF'
<body 1
<h1 1
<h2 4
<p 7
<section 4
<span 4
<table 3
<tbody 3
<td 27
<th 9
<thead 3
<tr 12
EOF

check_output 'Chromium: a phone-sized screenshot (390x844 PNG)' '
	chrome --window-size=390,844 --hide-scrollbars --screenshot="$SCRATCH/status-page.png" "file://$SCRATCH/page.html" >/dev/null &&
	od -A n -t u1 -j 16 -N 8 status-page.png | awk "{print \$1 * 16777216 + \$2 * 65536 + \$3 * 256 + \$4, \$5 * 16777216 + \$6 * 65536 + \$7 * 256 + \$8}"' <<'EOF'
390 844
EOF

# ---- k8shazgpu web and k8shazgpu host web ----

# when: the page's text with its times as words
when() { sed -E -e 's/^as of .* UTC/as of NOW/' -e 's/ [0-9]+s($|;|  )/ Ns\1/g' -e "s/^$(hostname): /HOST: /; s/^node $(hostname)\$/node HOST/"; }

check_output 'k8shazgpu web, the API server unreachable: said on the page, which is served' '
	KUBECONFIG=$FIXTURES/cli/kubeconfig k8shazgpu web --once | text | when' <<'EOF'
k8shazgpu status
as of NOW, refreshed every 10 s
Missing: the API server: unreachable: GET https://127.0.0.1:9/api: Failed to connect to 127.0.0.1 port 9: Couldn't connect to server
0 nodes, 0 GPUs: 0 free, 0 held, 0 unhealthy
no GPU nodes
Queue
nothing waits
EOF

start_redis
gpu-reserve init -g 3 -p fake >/dev/null
gpu-reserve reserve -G 0 -t manual -u 'alice<b>' -U alice -n "it's <i>mine</i>" -d 2h >/dev/null
gpu-reserve reserve -G 1 -t k8s -c uid-1 -u k8s:team/train-0-gpu >/dev/null
gpu-reserve reserve -g 3 -t manual -u carol -U carol -d 1h -w 60s >/dev/null 2>&1 &
waiter=$!
eventually 10 sh -c 'gpu-reserve queue -e | grep -q carol'
check_output 'k8shazgpu host web: the ledger: host users, the k8s holds, the queue (holding what it got)' '
	k8shazgpu host web --once --refresh 0 | text | when' <<'EOF'
HOST: k8shazgpu host status
as of NOW
1 node, 3 GPUs: 0 free, 3 held, 0 unhealthy
node HOST
Device  Health  Held by, for how long
GPU 0    host alice<b> (alice) (manual, it's <i>mine</i>) for Ns
GPU 1    k8s team/train-0-gpu for Ns
GPU 2    host carol (manual) for Ns
Queue
Waiting  Wants  For
host carol  3 GPUs, has 2  Ns
EOF

check_output 'k8shazgpu host web served: the same page; TERM stops it (0)' '
	k8shazgpu host web --port 0 --refresh 0 >hs.out 2>hs.err &
	hpid=$!
	eventually 10 grep -q serving hs.out
	hport=$(sed -n "s|^serving http://127.0.0.1:\([0-9]*\)/\$|\1|p" hs.out)
	curl -s "http://127.0.0.1:$hport/" | text | when | sed -n "3,8p"
	kill -TERM $hpid; wait $hpid; echo "exit $?"; cat hs.err' <<'EOF'
1 node, 3 GPUs: 0 free, 3 held, 0 unhealthy
node HOST
Device  Health  Held by, for how long
GPU 0    host alice<b> (alice) (manual, it's <i>mine</i>) for Ns
GPU 1    k8s team/train-0-gpu for Ns
GPU 2    host carol (manual) for Ns
exit 0
EOF
kill $waiter 2>/dev/null
wait $waiter 2>/dev/null

stop_redis
check_output 'k8shazgpu host web, the ledger down: said on the page' '
	k8shazgpu host web --once | text | when | sed "s/:$REDIS_PORT:/:PORT:/"' <<'EOF'
HOST: k8shazgpu host status
as of NOW, refreshed every 10 s
Missing: the ledger (Redis): redis 127.0.0.1:PORT: Connection refused
0 nodes, 0 GPUs: 0 free, 0 held, 0 unhealthy
no GPU nodes
Queue
nothing waits
EOF
done_testing
