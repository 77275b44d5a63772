#!/bin/sh
# A capture gpu-check took on a real H200 (a cloud VM: driver 580.159.04,
# CUDA 13.0, its sysfs numa_node -1), kept in t/fixtures/gpu-probe/h200-vm
# as the machine wrote it: gpu-probe replays it to the record asked for,
# to the facts the live probe read there, and claim-make makes of it the
# labels, the ResourceSlice and the objects made on that machine.
. "$(dirname "$0")/lib.sh"

cp -R "$FIXTURES"/gpu-probe/h200-vm/* . || exit 1
replay() { gpu-probe -q -N vm -r query.csv -m list.txt -x q.xml -R proc -Y sys; }
stable='select(.kind == "gpu") | del(.memory_used_mib, .util_pct, .temp_c, .power_w, .health, .health_reasons)'

check_output 'the capture replays to this record (numa_node -1 reads as null)' 'replay; echo "exit $?"' <<'EOF'
{"kind":"gpu","node":"vm","index":0,"minor":0,"uuid":"GPU-f779798e-321f-d5c3-8983-122f3e0f65f9","name":"NVIDIA H200","product":"NVIDIA-H200","brand":"NVIDIA","memory_mib":143771,"memory_used_mib":0,"util_pct":0,"temp_c":39,"power_w":81,"power_limit_w":700,"ecc_errors":0,"driver_version":"580.159.04","cuda_version":"13.0","compute_cap":"9.0","pci_bus_id":"00000000:00:06.0","pcie_root":"pci0000:00","numa_node":null,"pci_class":"0x030200","addressing_mode":"None","machine":null,"mig_enabled":false,"mig":null,"health":"ok","health_reasons":[]}
exit 0
EOF

check_output 'its stable facts are those the live probe read on the machine' \
	'replay | jq -c "$stable" >replayed; jq -c "$stable" live.ndjson | cmp - replayed && echo same' <<'EOF'
same
EOF

check_output 'claim-make makes the labels and the slice made there, and the same objects but for their times' '
	replay | claim-make >objects
	jq -r "select(.kind == \"Node\") | .metadata.labels | to_entries[] | \"\(.key)=\(.value)\"" objects | cmp - labels.txt && echo labels same
	jq -c "select(.kind == \"ResourceSlice\")" objects | cmp - slice.ndjson && echo slice same
	t="del(.metadata.annotations[\"agentaflow.gpu/last-update\"]?, .status.lastUpdate?)"
	jq -c "$t" objects >a; jq -c "$t" objects.ndjson | cmp - a && echo objects same; wc -l <labels.txt' <<'EOF'
labels same
slice same
objects same
30
EOF

check_output 'in a runc container with only its CDI edits, CUDA saw the same GPU' \
	'jq -r "select(.kind == \"cuda_device\") | .uuid" cuda.ndjson; replay | jq -r .uuid' <<'EOF'
GPU-f779798e-321f-d5c3-8983-122f3e0f65f9
GPU-f779798e-321f-d5c3-8983-122f3e0f65f9
EOF

done_testing
