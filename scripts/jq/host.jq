# host.jq: the module of k8shazgpu host's jq programs (include "host",
# with jq -L): times (RFC3339, UTC, as gpu-reserve writes them) to Unix
# seconds; canhazgpu's duration format; table cells that may be painted
# (ANSI colours as canhazgpu's, only when $color), and its table style: a
# space each side of a cell, columns split by │, the header underlined by ─
# and ┼, no outer border.
def t: if type != "string" then null
	else try (sub("\\.[0-9]+"; "") | sub("[+]00:00$"; "Z") | fromdateiso8601) catch null end;
def ago: if . == null then null else $now - . end;
def flat: gsub("[\t\n\r]"; " ") | gsub("[[:cntrl:]]"; "?");
def dur: if . < 60 then "0h 0m \(.)s" else "\(. / 3600 | floor)h \(. / 60 | floor % 60)m \(. % 60)s" end;
def paint($c): if $color then {t: ., s: "\u001b[\($c)m\(.)\u001b[0m"} else {t: .} end;
def dim: paint("2");
def cell: if type == "object" then . else {t: (. // "" | tostring)} end;
def spaces($k): [range(0; $k) | " "] | join("");
def table($head):
	([$head | map(paint("36;1"))] + map(map(cell))) as $rows
	| [range(0; $head | length) as $i | [$rows[][$i].t | length] | max] as $w
	| def line: [range(0; $w | length) as $i | .[$i]
		| " " + (.s // .t) + spaces($w[$i] - (.t | length)) + " "] | join("│");
	($rows[0] | line),
	([$w[] | [range(0; . + 2) | "─"] | join("")] | join("┼")),
	($rows[1:][] | line);
