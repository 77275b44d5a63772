# host-queue.jq: queue-entry records (an array), each with its entry as stored
# (gpu-reserve queue -e), to canhazgpu queue, "table" or "json" ($mode).
# The JSON is its QueueStatus: each entry as its Go QueueEntry writes it
# again (members of the wrong type as their zero value, the omitempty
# ones left out when empty, times as its FlexibleTime writes them), no
# entries null.
include "host";
map(select(.kind == "queue-entry")) | sort_by(.position)
| def wanted: if (.requested_ids // []) | length > 0 then .requested_ids | length else .requested // 0 end;
def cut($k): if length <= $k then . else .[0:$k - 3] + "..." end;
def col($k): . + spaces($k - length);
def two: tostring | if length < 2 then "0" + . else . end;
def str: if type == "string" then . else "" end;
def num: if type == "number" then . else 0 end;
def ids: if type == "array" then . else [] end;
# a time as FlexibleTime writes it again: RFC 3339 with its own offset (Z
# for +00:00), the fraction cut to nanoseconds, no trailing zeros; a
# number of Unix seconds (a numeric string too) in local time; null for
# none; anything else as it is (gpu-reserve has named it)
def gotime:
	if type == "number" then
		trunc as $t | (($t | localtime | mktime) - $t) as $off
		| ($t + $off | todate | .[0:19])
		+ if $off == 0 then "Z"
		else (if $off < 0 then "-" else "+" end)
			+ ($off | fabs / 3600 | floor | two) + ":" + ($off | fabs % 3600 / 60 | floor | two) end
	elif type == "string" and test("^-?[0-9]+([.][0-9]+)?$") then tonumber | gotime
	elif type == "string" then
		(capture("^(?<d>[0-9]{4}-[0-9]{2}-[0-9]{2})[Tt](?<h>[0-9]{2}:[0-9]{2}:[0-9]{2})([.](?<f>[0-9]+))?(?<z>[Zz]|[-+][0-9]{2}:[0-9]{2})$")
		| "\(.d)T\(.h)" + (.f // "" | .[0:9] | sub("0+$"; "") | if . == "" then . else "." + . end)
		+ if .z == "Z" or .z == "z" or .z[1:] == "00:00" then "Z" else .z end) // .
	else . end;
def goentry:
	{id: (.id | str), user: (.user | str), actual_user: (.actual_user | str),
		requested_count: (.requested_count | num)}
	+ if .requested_ids | ids | length > 0 then {requested_ids} else {} end
	+ {allocated_gpus: (.allocated_gpus | if type == "array" then . else null end),
		reservation_type: (.reservation_type | str)}
	+ if .expiry_duration | num != 0 then {expiry_duration} else {} end
	+ if .note | str != "" then {note} else {} end
	+ {enqueue_time: (.enqueue_time | gotime), last_heartbeat: (.last_heartbeat | gotime)}
	# a number (a wait in nanoseconds, named by gpu-reserve) as it is
	+ if .wait_timeout == null then {}
	else {wait_timeout: (.wait_timeout | if type == "number" then . else gotime end)} end;
def gowanted: if .requested_ids | ids | length > 0 then .requested_ids | length else .requested_count | num end;
if $mode == "json" then
	{entries: (if length == 0 then null else map(.entry | goentry) end),
	total_waiting: length,
	total_gpus_requested: (map(.entry | gowanted) | add // 0),
	total_gpus_allocated: (map(.entry.allocated_gpus | ids | length) | add // 0)}
elif length == 0 then
	"GPU Reservation Queue", "=====================", "No entries waiting in queue."
else
	"GPU Reservation Queue", "=====================", "",
	"\("Position" | col(10)) \("User" | col(15)) \("Requested" | col(15)) \("Allocated" | col(12)) Waiting",
	"\("--------" | col(10)) \("----" | col(15)) \("---------" | col(15)) \("---------" | col(12)) -------",
	(to_entries[] | .key as $i | .value
		| "\("\($i + 1)" | col(10)) \(.user // "" | flat | cut(15) | col(15)) \(
			(if (.requested_ids // []) | length > 0 then "IDs: [\(.requested_ids | map(tostring) | join(" "))]"
			else "\(wanted) GPUs" end) | cut(15) | col(15)) \(
			"\(.allocated // [] | length)/\(wanted)" | col(12)) \(.enqueued | t | ago | if . == null then "-" else dur end)"),
	"",
	"Total: \(length) entries waiting for \((map(wanted) | add) - (map(.allocated // [] | length) | add)) GPUs (\(map(.allocated // [] | length) | add) partially allocated)"
end
