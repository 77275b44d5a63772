# vllm-models.jq: k8shazgpu vllm run: the Hugging Face models a command
# names ($ARGS.positional, its words as given): the model of `vllm serve
# MODEL` (the word after "serve" that follows a word vllm or .../vllm,
# unless it is an option), and the values of --model and --tokenizer,
# as "--opt V" or "--opt=V". A local path (/... or ./...) is no model
# id: it is left alone. Prints two lines: the model ids (a JSON array,
# each once, in order), then the first word that is neither, as a
# message naming its argument, or an empty line.
def hub_part: test("\\A[A-Za-z0-9]([A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?\\z") and (test("[.][.]|--") | not);
def hub_id: (split("/") | length >= 1 and length <= 2 and all(.[]; hub_part));
def local_path: startswith("/") or startswith("./");
$ARGS.positional as $a
| [range(0; $a | length) as $i | $a[$i] as $w
	| if ($w == "--model" or $w == "--tokenizer") and $i + 1 < ($a | length) then {arg: $w, v: $a[$i + 1]}
	  elif $w | test("\\A--(model|tokenizer)=") then {arg: ($w | sub("=.*"; "")), v: ($w | sub("\\A[^=]*="; ""))}
	  elif $w == "serve" and $i > 0 and ($a[$i - 1] | test("(\\A|/)vllm\\z")) and $i + 1 < ($a | length)
		and ($a[$i + 1] | startswith("-") | not) then {arg: "vllm serve", v: $a[$i + 1]}
	  else empty end
	| select(.v | local_path | not)] as $named
| ([$named[] | select(.v | hub_id) | .v] | reduce .[] as $m ([]; if index([$m]) then . else . + [$m] end) | tojson),
  ([$named[] | select(.v | hub_id | not)][0] // null
	| if . == null then "" else "\(.arg) \(.v | tojson): not a Hugging Face model id (NAME or ORG/NAME) nor a local path (/... or ./...)" end)
