# vllm-decide.jq: k8shazgpu vllm run and run, on each watch event of the pod: a line "say ...", or the
# outcome, "ok NODE", "failed REASON" (it will never run) or "gone".
# $main is the main container's name; with $follow, a main container
# that ended already, however, is there to follow. With $started, a
# running main container counts once its startup probe passed: vllm
# run's pack applied (without --follow no log would show a refused one).
def bad_wait: IN("ErrImagePull", "ImagePullBackOff", "InvalidImageName", "ErrImageNeverPull",
	"CreateContainerConfigError", "CreateContainerError", "RunContainerError", "CrashLoopBackOff");
def st: .state // {};
if .type == "DELETED" then "gone"
else .object as $p | ($p.status // {}) as $s
| ([$s.initContainerStatuses[]? | select(st.terminated and st.terminated.exitCode != 0)
	| "failed init container \(.name) exited \(st.terminated.exitCode) (\(st.terminated.reason // "Error"))\(st.terminated.message // "" | if . == "" then "" else ": " + . end)"]
  + [$s.initContainerStatuses[]?, $s.containerStatuses[]? | select(st.waiting.reason // "" | bad_wait)
	| "failed container \(.name): \(st.waiting.reason)\(st.waiting.message // "" | if . == "" then "" else ": " + . end)"]
  + [$s.containerStatuses[]? | select(($follow | not) and .name == $main and st.terminated and st.terminated.exitCode != 0)
	| "failed container \(.name) exited \(st.terminated.exitCode) (\(st.terminated.reason // "Error"))\(st.terminated.message // "" | if . == "" then "" else ": " + . end)"]) as $bad
| if ($bad | length) > 0 then $bad[0]
  elif any($s.containerStatuses[]?; .name == $main and (st.running and (($started | not) or .started) or st.terminated))
	then "ok \($p.spec.nodeName)"
  elif $s.phase == "Failed" then "failed pod failed: \($s.reason // "-") \($s.message // "")"
  elif $s.phase == "Succeeded" then "ok \($p.spec.nodeName)"
  else ([$s.conditions[]? | select(.type == "PodScheduled" and .status == "False")][0]) as $c
	| if $c then "say pending: \($c.reason // "-"): \($c.message // "")"
	  elif ($p.spec.nodeName // "") == "" then "say pending: not scheduled yet"
	  elif any($s.containerStatuses[]?; .name == $main and st.running) then "say started on \($p.spec.nodeName); applying the pack"
	  else ([$s.initContainerStatuses[]?, $s.containerStatuses[]? | select(st.waiting) | "\(.name): \(st.waiting.reason // "waiting")"] | join(", ")) as $w
		| "say scheduled on \($p.spec.nodeName)\(if $w == "" then "" else "; " + $w end)"
	  end
  end
end
