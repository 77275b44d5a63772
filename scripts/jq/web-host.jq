# web-host.jq: k8shazgpu host web: the state status-page(1) renders, from
# the records of gpu-reserve status -l and queue -e (an array): this
# host's GPUs as one node, named $host, who holds each since when
# (host users, and the cluster's k8s holds), and the ledger's queue.
# $rc: gpu-reserve's status, $why its message: the ledger unreachable
# (75) is named and nothing else is known.
def secs: if type == "string" then
	(try (capture("^(?<t>[0-9-]{10}T[0-9:]{8})(\\.[0-9]+)?Z$").t + "Z" | fromdateiso8601) catch null)
	elif type == "number" then floor else null end;
def holder: if .state == "ERROR" then
		{kind: "host", name: "an unreadable ledger entry", detail: (.error // null), since: null}
	elif .state != "IN_USE" then empty
	elif .type == "k8s" then
		{kind: "k8s", name: (.user // "" | ltrimstr("k8s:")), detail: null, since: (.since | secs)}
	else {kind: "host", name: (if .actual_user != null and .actual_user != .user then "\(.user) (\(.actual_user))" else .user // "-" end),
		detail: ([.type // empty, .note // empty] | join(", ")), since: (.since | secs)} end;
def host_state:
	{title: "\($host): k8shazgpu host status", now: $now,
	 missing: (if $rc == 0 then [] elif $rc == 1 and any(.[]; .kind == "gpu-state") then ["some of the ledger: \($why)"]
		else ["the ledger (Redis): \($why)"] end),
	 nodes: [map(select(.kind == "gpu-state")) | select(length > 0)
		| {name: $host, ready: null, updated: null,
		   devices: [.[] | {gpu, mig: null, name: null, health: null, reasons: [], holders: [holder]}]}],
	 queue: [.[] | select(.kind == "queue-entry")
		| {kind: "host", name: .user,
		   wants: ((if .requested_ids then "GPUs \(.requested_ids | map(tostring) | join(", "))"
			elif .requested == 1 then "1 GPU" else "\(.requested) GPUs" end)
			+ (if (.allocated // []) | length > 0 then ", has \(.allocated | map(tostring) | join(", "))" else "" end)),
		   since: (.enqueued | secs)}]};
