# host-status.jq: gpu-state records (an array; times as gpu-reserve status -l
# writes them) to canhazgpu status: "table", "json" or "summary" ($mode);
# $gpus maps GPU index to what the readings say of it: model name, how
# many compute processes, their users.
include "host";
map(select(.kind == "gpu-state"))
| def lt: if type != "string" then null
	else try (capture("^(?<t>[0-9-]{10}T[0-9:]{8})(\\.[0-9]+)?(?<z>Z|[+-][0-9]{2}:[0-9]{2})$")
		| (.t + "Z" | fromdateiso8601)
			- if .z == "Z" then 0
			else (if .z[0:1] == "-" then -1 else 1 end)
				* ((.z[1:3] | tonumber) * 3600 + (.z[4:6] | tonumber) * 60) end)
	catch null end;
def processes($n): if $n == 1 then "1 process" else "\($n) processes" end;
def who: if length == 0 then "unknown" elif length == 1 then .[0]
	elif length == 2 then "\(.[0]) and \(.[1])"
	else "\(.[0:2] | join(", ")) and \(length - 2) more" end;
def validation($m; $g):
	if $m != null and $m > $mib then
		(if $g.procs > 0 then "\($m)MB, \($g.procs) processes" else "\($m)MB used" end)
	elif $gpus != {} then "no usage detected" else null end;
def details:
	if .type == "run" then
		(if .heartbeat == null then "active"
		else (.heartbeat | lt | ago) as $d
			| if $d == null then "heartbeat unreadable"
			elif $d < 0 then "heartbeat in the future" else "heartbeat \($d | dur) ago" end end)
	elif .type == "manual" then
		(if .expires == null then "manual reservation"
		else (.expires | lt) as $e
			| if $e == null then "expiry unreadable"
			elif $e < $now then "expires expired" else "expires in \($e - $now | dur)" end end)
	elif .type == "k8s" then "claim \(.claim_uid // "" | .[0:8] | flat)"
	else "" end;
def info:
	.memory_used_mib as $m
	| ($gpus["\(.gpu)"] // {procs: 0, users: []}) as $g
	| {gpu_id: .gpu, status: .state, gpu_model: $g.model}
	+ if .state == "IN_USE" then
		{user: (if .type == "k8s" or .actual_user == null or .actual_user == .user then .user
			else "\(.actual_user) (\(.user))" end),
		duration: (.since | lt | if . == null then null else $now - . | dur end),
		type: (.type // "" | ascii_upcase),
		note: .note,
		details: details,
		validation: validation($m; $g),
		last_heartbeat: (if .type == "run" then .heartbeat else null end),
		expiry_time: (if .type == "manual" then .expires else null end)}
	elif .state == "AVAILABLE" then
		{details: (if .last_released == null then "never used"
			else (.last_released | lt | ago) as $d
			| if $d == null then "free" else "free for \($d | dur)" end end),
		validation: (if $m == null then null else "\($m)MB used" end),
		last_released}
	elif .state == "UNRESERVED" then
		{details: "WITHOUT RESERVATION", unreserved_users: $g.users,
		process_info: "\($m)MB used by \(processes($g.procs))"}
	elif .state == "ERROR" then {details: .error, error}
	else {details: "unknown status"} end;
def row:
	[(.gpu_id | tostring)]
	+ if .status == "AVAILABLE" then
		[("● AVAILABLE" | paint("32;1")), ("-" | dim), ("-" | dim), ("-" | dim), .details,
		(.validation // "" | dim), ("-" | dim)]
	elif .status == "IN_USE" then
		[("● IN_USE   " | paint("34")), (.user // "-" | flat), (.duration // "-"), .type, .details,
		(.validation // "-" | dim), (if .note then .note | flat else "-" | dim end)]
	elif .status == "UNRESERVED" then
		[("⚠ UNRESERVED" | paint("33;1")), (.unreserved_users // [] | who | flat), ("-" | dim),
		("-" | dim), .process_info, ("-" | dim), ("-" | dim)]
	elif .status == "ERROR" then
		[("✗ ERROR    " | paint("31;1")), ("-" | dim), ("-" | dim), ("-" | dim), (.details | flat),
		("-" | dim), ("-" | dim)]
	else ["  \(.status)", ("-" | dim), ("-" | dim), ("-" | dim), "unknown status", ("-" | dim), ("-" | dim)] end;
map(info)
| if $mode == "json" then
	map({gpu_id, status, user, duration, type, note, details, validation, gpu_model,
		last_released, last_heartbeat, expiry_time, unreserved_users, process_info, error}
		| with_entries(select(.value != null and .value != "" and .value != [])))
elif $mode == "summary" then
	(map(select(.status == "AVAILABLE")) | length) as $a
	| ([.[].gpu_model | select(. != null and . != "")] | group_by(.)
		| if length == 0 then "-" elif length == 1 then .[0][0]
		else map("\(length) \(.[0])") | join(", ") end) as $models
	| "",
	([[("localhost" | paint("35;1")), ("\(length)" | paint("37;1")), ($models | dim),
		(if $a > 0 then {t: "✓ \($a)", s: "\("✓" | paint("32") | .s // .t) \($a)"}
		else {t: "✗ \($a)", s: "\("✗" | paint("31;1") | .s // .t) \($a)"} end),
		"\(map(select(.status == "IN_USE" or .status == "UNRESERVED")) | length)"]]
		| table(["HOST", "TOTAL", "GPU MODELS", "AVAILABLE", "IN USE"])),
	""
else
	map(row) | table(["GPU", "STATUS", "USER", "DURATION", "TYPE", "DETAILS", "VALIDATION", "NOTE"])
end
