# cache.jq: the module of k8shazgpu cache's jq programs (include "cache"
# with jq -L).
# Shared by the programs below: an item's CLI type word, the ref its
# nodes report (cache-sync's "ref"), byte counts for people.
def word: if .type == "gitRepo" then "gitrepo" elif .type == "models" or .type == "hfModel" then "model" elif .type == "image" then "image" else .type end;
def want_ref: if .type == "image" then .image.ref
	elif .type == "gitRepo" then "\(.gitRepo.url)@\(if (.gitRepo.commit // "") != "" then .gitRepo.commit else .gitRepo.branch // "main" end)"
	elif .models then "\(.models.repoId)@\(.models.revision // "main")" else null end;
def unit: if . < 1048576 then [1024, "KiB"] elif . < 1073741824 then [1048576, "MiB"]
	elif . < 1099511627776 then [1073741824, "GiB"] else [1099511627776, "TiB"] end;
def tenths($d): (. * 10 / $d | round) as $t | "\($t / 10 | floor).\($t % 10)";
def bytes: if . == null then "-" elif . < 1024 then "\(.) B" else unit as [$d, $u] | "\(tenths($d)) \($u)" end;
def progress: (.bytesDone // 0) as $done | (.bytesTotal // 0) as $total
	| if .phase == "pulling" then
		if $total > 0 then ($total | unit) as [$d, $u]
			| "\($done * 100 / $total | floor)% \($done | tenths($d))/\($total | tenths($d)) \($u)"
		else "\($done | bytes)" end
	elif .phase == "ready" then (if $total > 0 then $total else $done end) | bytes
	else "-" end;
def short: if (. // "") == "" then "-" else sub("^sha256:"; "") | .[0:12] end;
def dash: if . == null or . == "" then "-" else . end;
def selector: if .scope == "nodeSelector" then (.nodeSelector // {} | to_entries | map("\(.key)=\(.value)") | join(",")) else "allNodes" end;

# norm: an item with the defaults the CRD fills in and no empty optional
# fields, so that two spellings of the same item compare equal.
def norm: {scope: "allNodes"} + .
	| if .gitRepo then .gitRepo = ({branch: "main", syncStrategy: "hardReset"} + .gitRepo) else . end
	| if .models then .models = ({revision: "main", cache: "blobs"} + .models) else . end
	| if .gitRepo.commit == "" then del(.gitRepo.commit) else . end
	| if .image.pullSecret == "" then del(.image.pullSecret) else . end
	| if .nodeSelector == {} then del(.nodeSelector) else . end;
