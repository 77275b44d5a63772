# cache-check.jq: k8shazgpu cache add: the first problem of the item on
# stdin, as the CRD would see it, naming the command-line argument that
# gave the field ($args: a JSON object field -> argument); nothing when it
# is good.
def bad($f; $why): {f: $f, v: ., why: $why};
def str($f; $re; $max; $why): if (. | length) == 0 or length > $max or (test($re) | not) then bad($f; $why) else empty end;
def nows: "\\A\\S+\\z";
def labelvalue: "\\A([A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?)?\\z";
[ (.image // empty | .ref | str("ref"; nows; 1024; "1 to 1024 bytes, no spaces")),
  (.gitRepo // empty | .url | str("url"; nows; 2048; "1 to 2048 bytes, no spaces")),
  (.models // empty | .repoId | str("repoId"; "\\A[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?\\z"; 256;
	"a Hugging Face model id, ORG/NAME or NAME")),
  (.name | str("name"; "\\A[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?\\z"; 50;
	"1 to 50 letters, digits, \".\", \"_\" or \"-\", starting and ending with a letter or digit")),
  (.image.pullSecret // empty | str("pullSecret"; "\\A[a-z0-9]([-a-z0-9.]*[a-z0-9])?\\z"; 253;
	"a Secret name: 1 to 253 of a-z, 0-9, \".\" or \"-\"")),
  (.gitRepo // empty | (.branch | str("branch"; nows; 255; "1 to 255 bytes, no spaces")),
	(.commit // empty | str("commit"; "\\A[0-9a-f]{7,40}\\z"; 40; "7 to 40 hex digits")),
	(.pathName | str("pathName"; "\\A[A-Za-z0-9_][A-Za-z0-9._-]*\\z"; 253;
		"1 to 253 letters, digits, \".\", \"_\" or \"-\", not starting with \".\" or \"-\"")),
	(.pathName | if . == "hub_cache" then bad("pathName"; "hub_cache is the model cache's") else empty end),
	(.pathName | if test("[.]tmp-[0-9]+(-[0-9]+)?\\z") then bad("pathName"; "a name ending .tmp-N is a temporary name of the cache's") else empty end)),
  (.models // empty | .revision | str("revision"; nows; 255; "1 to 255 bytes, no spaces")),
  (.nodeSelector // {} | to_entries[]
	| (.key | str("selector"; "\\A([a-z0-9]([-a-z0-9.]*[a-z0-9])?/)?[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?\\z"; 317;
		"a label key, [PREFIX/]NAME")),
	  (.value | if . == "" then empty else str("selector"; labelvalue; 63;
		"a label value: up to 63 letters, digits, \".\", \"_\" or \"-\"") end))
] | first // empty | "\($args[.f]) \(.v | tojson): \(.why)"
