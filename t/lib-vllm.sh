# t/lib-vllm.sh: helpers of the vLLM tests on the real node (t/976x;
# t/lib.sh is sourced first).

# static_applier: PACKBIN, the applier the pods get. It must be the static
# diff-pack: a sanitized build links it dynamically, and the base image
# has no C library; then the unsanitized build's (B less its -san), or
# build/'s. With none, the test file is skipped.
static_applier() {
	for PACKBIN in "$BUILD/static/diff-pack" "${BUILD%-san}/static/diff-pack" "$TOP/build/static/diff-pack" ''; do
		[ -z "$PACKBIN" ] || { [ -x "$PACKBIN" ] && ! readelf -d "$PACKBIN" 2>/dev/null | grep -q NEEDED; } && break
	done
	[ -n "$PACKBIN" ] || skip_all "no static diff-pack in $B/static or build/static"
}

# plan_remember, then plan_cleanup at the end: the CachePlan items the
# runs (vllm run without --skip-cache-check adds the image, the
# repository and the models when missing) and the test added, by the
# names they said on stderr (./*.err), removed; the plan itself deleted
# when the test made it and it is empty.
CP=cacheplans.canhazgpu.dev
plan_remember() {
	if k get "$CP" default >/dev/null 2>&1; then PLAN_BEFORE=1; else PLAN_BEFORE=0; fi
}
plan_cleanup() {
	items=$(cat ./*.err 2>/dev/null | sed -n 's/^cache item \([^ ]*\) added.*/\1/p' | sort -u)
	# shellcheck disable=SC2086
	[ -z "$items" ] || k8shazgpu cache remove $items >/dev/null 2>&1
	[ "$PLAN_BEFORE" = 1 ] || [ "$(k get "$CP" default -o json 2>/dev/null | jq '.spec.items | length')" != 0 ] ||
		k delete "$CP" default >/dev/null 2>&1
}

# vllm_repo: the stand-in vLLM repository, its base image pushed to the
# cluster's registry and a developer's clone (t/vllmrepo), in
# $SCRATCH/repo; its variables (VR_*) set.
vllm_repo() {
	. "$TOP/t/vllmrepo"
	vr_all "$SCRATCH/repo" "$REGISTRY_PORT" "$(free_port)" >/dev/null 2>repo.err ||
		{ echo "Bail out! t/vllmrepo: $(tail -n 3 repo.err)"; exit 1; }
	. "$SCRATCH/repo/vllmrepo.env"
}
