# host-report.jq: usage records and the usage-total record (an array) to
# canhazgpu report JSON (no users: null; k8s holds counted as manual, as
# it counts every type but run), or ($mode "table") to the lines of its
# text report, user rows as name padded to 20, TAB, hours, percentage
# (NaN when there are no hours at all, as its 0 / 0), run and manual
# counts, for awk to format the numbers.
include "host";
(map(select(.kind == "usage")) | map(.manual_count += (.k8s_count // 0))) as $u
| (map(select(.kind == "usage-total")) | .[0] // {}) as $tot
| def day: t | if . == null then "?" else strflocaltime("%Y-%m-%d") end;
if $mode == "json" then
	{users: (if $u == [] then null else $u | map({name: .user, gpu_hours, percentage, run_count, manual_count}) end),
	total_gpu_hours: ($tot.gpu_hours // 0), total_reservations: ($tot.reservations // 0),
	unique_users: ($tot.users // 0), start_date: ($tot.start | day), end_date: ($tot.end | day),
	days: $tot.days}
else
	"", "=== GPU Reservation Report ===",
	"Period: \($tot.start | day) to \($tot.end | day) (\($tot.days) days)", "",
	"U\t\("User" | . + spaces(20 - length))",
	($u[] | "R\t\(.user | flat | . + spaces(20 - length))\t\(.gpu_hours)\t\(
		if ($tot.gpu_hours // 0) == 0 then "NaN" else .percentage end)\t\(.run_count)\t\(.manual_count)"),
	"T\t\($tot.gpu_hours // 0)\t\($u | map(.run_count) | add // 0)\t\($u | map(.manual_count) | add // 0)",
	"", "Total reservations: \($tot.reservations // 0)", "Unique users: \($tot.users // 0)", ""
end
