#!/bin/sh
# dra-plugin's CDI specs, built offline (dra-plugin spec) on a fake node
# laid out as the real H200 was (driver 580.159.04): a driver root
# with the libraries in usr/local/nvidia/lib64, the driver's /proc files,
# device nodes made with mknod. Minor numbers, not indexes, name the
# nodes; a MIG device gets its nvidia-cap nodes from the access files;
# full and env modes; the hook present and absent; and bad input: an
# access file that does not parse, a dangling or missing library, a minor
# with no node: each named in a message, and never a node or file that
# is not there named in the spec.
. "$(dirname "$0")/lib.sh"

V=580.159.04
U=GPU-ef3dd380-5942-addc-6b66-8cd55589cd49
M=MIG-0a9c6f5e-2b71-5d4e-9c38-1f6b2e7d4a10

# gpu INDEX MINOR UUID [MIG]: one gpu record of node h200 (MIG: its mig
# object, the record then a MIG device's).
gpu() {
	printf '{"kind":"gpu","node":"h200","index":%s,"minor":%s,"uuid":"%s","name":"NVIDIA H200","product":"NVIDIA-H200","memory_mib":18176,"driver_version":"%s","compute_cap":"9.0","pci_bus_id":"00000000:00:06.0","mig_enabled":%s,"mig":%s,"health":"ok","health_reasons":[]}\n' \
		"$1" "$2" "$3" "$V" "$([ -n "${4:-}" ] && echo true || echo false)" "${4:-null}"
}
gpu 0 0 "$U" >h200.json
gpu 0 0 "$M" '{"profile":"1g.18gb","parent_uuid":"'"$U"'","device":0,"gi":1,"ci":0}' >mig.json
# the node: dev/ (mknod, or plain files where mknod is not allowed)
node() { # node PATH MAJOR MINOR
	mknod "dev/$1" c "$2" "$3" 2>/dev/null || { : >"dev/$1"; NODES=files; }
}
NODES=mknod
mkdir -p dev/nvidia-caps
node nvidia0 195 0
node nvidiactl 195 255
node nvidia-uvm 238 0
node nvidia-uvm-tools 238 1
for n in 1 2 12 13; do node nvidia-caps/nvidia-cap$n 241 $n; done
[ "$NODES" = mknod ] || echo "# mknod failed: the device nodes are plain files"

# proc/: the driver's files, as the H200's
mkdir -p proc/driver/nvidia/gpus/0000:00:06.0 proc/driver/nvidia/capabilities/gpu0/mig/gi1/ci0
printf 'NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  %s  Release Build  (nixbld@)  \nGCC version:  gcc version 15.3.0 (GCC) \n' "$V" >proc/driver/nvidia/version
printf 'Model: \t\t NVIDIA H200\nBus Location: \t 0000:00:06.0\nDevice Minor: \t 0\n' >proc/driver/nvidia/gpus/0000:00:06.0/information
printf 'DeviceFileMinor: 12\nDeviceFileMode: 292\n' >proc/driver/nvidia/capabilities/gpu0/mig/gi1/access
printf 'DeviceFileMinor: 13\nDeviceFileMode: 292\n' >proc/driver/nvidia/capabilities/gpu0/mig/gi1/ci0/access

# root/: the driver root
L=root/usr/local/nvidia/lib64
mkdir -p $L root/usr/lib/x86_64-linux-gnu root/usr/bin root/lib/firmware/nvidia/$V root/run/nvidia-persistenced
for f in libcuda libnvidia-ml libnvidia-nvvm libnvidia-allocator; do echo ELF >$L/$f.so.$V; done
ln -s libcuda.so.$V $L/libcuda.so.1
ln -s libnvidia-ptxjitcompiler.so.$V.gone $L/libnvidia-ptxjitcompiler.so.$V
echo ELF >root/usr/lib/x86_64-linux-gnu/libnvidia-gpucomp.so.$V
for b in nvidia-smi nvidia-debugdump; do printf '#!/bin/sh\n' >root/usr/bin/$b; chmod 755 root/usr/bin/$b; done
echo fw >root/lib/firmware/nvidia/$V/gsp_ga10x.bin
echo fw >root/lib/firmware/nvidia/$V/gsp_tu10x.bin
: >root/run/nvidia-persistenced/socket

spec() { dra-plugin -T root -D dev -p proc "$@"; }
# summary: a spec, one line per annotation, node, mount, hook and device.
summary() {
	jq -r '(.annotations | to_entries[] | "annotation \(.key)=\(.value)"),
	(.containerEdits.deviceNodes[]? | "node \(.path) \(.hostPath)"),
	(.containerEdits.mounts[]? | "mount \(.containerPath) \(.hostPath) \(.options | join(","))"),
	(.containerEdits.hooks[]? | "hook \(.hookName) \(.path) \(.args | join(" "))"),
	(.devices[] | "device \(.name)", (.containerEdits.env[] | "  env \(.)"),
		(.containerEdits.deviceNodes[]? | "  node \(.path) \(.hostPath)"))'
}
# there: every hostPath of the spec on stdin exists.
there() {
	jq -r '.. | objects | .hostPath? // empty' | while read -r p; do
		test -e "$p" || { echo "named but not there: $p"; exit 1; }
	done
}

check_output 'the H200, full mode, no hook: nodes by minor, the driver files, what was skipped' '
	spec -g h200.json spec gpu-0 >h200.spec 2>h200.err && summary <h200.spec && cat h200.err' <<EOF
annotation canhazgpu.dev/cdi-mode=full
annotation canhazgpu.dev/claim=offline/spec
annotation canhazgpu.dev/claim-uid=offline
annotation canhazgpu.dev/driver=$L/libnvidia-ptxjitcompiler.so.$V: a dangling symlink, not mounted; no nvidia-cdi-hook in the bin directories under root: no hooks (no libcuda.so symlinks, no ld cache update)
node /dev/nvidiactl dev/nvidiactl
node /dev/nvidia-uvm dev/nvidia-uvm
node /dev/nvidia-uvm-tools dev/nvidia-uvm-tools
mount /usr/local/nvidia/lib64/libcuda.so.$V $L/libcuda.so.$V ro,nosuid,nodev,bind
mount /usr/local/nvidia/lib64/libnvidia-ml.so.$V $L/libnvidia-ml.so.$V ro,nosuid,nodev,bind
mount /usr/lib/x86_64-linux-gnu/libnvidia-gpucomp.so.$V root/usr/lib/x86_64-linux-gnu/libnvidia-gpucomp.so.$V ro,nosuid,nodev,bind
mount /usr/local/nvidia/lib64/libnvidia-allocator.so.$V $L/libnvidia-allocator.so.$V ro,nosuid,nodev,bind
mount /usr/local/nvidia/lib64/libnvidia-nvvm.so.$V $L/libnvidia-nvvm.so.$V ro,nosuid,nodev,bind
mount /usr/bin/nvidia-smi root/usr/bin/nvidia-smi ro,nosuid,nodev,bind
mount /usr/bin/nvidia-debugdump root/usr/bin/nvidia-debugdump ro,nosuid,nodev,bind
mount /run/nvidia-persistenced/socket root/run/nvidia-persistenced/socket ro,nosuid,nodev,bind,noexec
mount /lib/firmware/nvidia/$V/gsp_ga10x.bin root/lib/firmware/nvidia/$V/gsp_ga10x.bin ro,nosuid,nodev,bind
mount /lib/firmware/nvidia/$V/gsp_tu10x.bin root/lib/firmware/nvidia/$V/gsp_tu10x.bin ro,nosuid,nodev,bind
device offline-gpus
  env CUDA_VISIBLE_DEVICES=$U
  env NVIDIA_VISIBLE_DEVICES=$U
  env CANHAZGPU_CLAIM=offline/spec
  env CANHAZGPU_CLAIM_UID=offline
  env CANHAZGPU_DEVICES=gpu-0
  node /dev/nvidia0 dev/nvidia0
dra-plugin: $L/libnvidia-ptxjitcompiler.so.$V: a dangling symlink, not mounted
dra-plugin: no nvidia-cdi-hook in the bin directories under root: no hooks (no libcuda.so symlinks, no ld cache update)
EOF
check 'every path it names is there' 'there <h200.spec'

printf '#!/bin/sh\n' >root/usr/bin/nvidia-cdi-hook
chmod 755 root/usr/bin/nvidia-cdi-hook
check_output 'with nvidia-cdi-hook in usr/bin: the toolkit hooks (symlinks, CUDA compat, ld cache of each library directory)' '
	spec -g h200.json spec gpu-0 2>hook.err | tee hook.spec | summary | grep -E "^(hook|annotation canhazgpu.dev/driver)" && cat hook.err' <<EOF
annotation canhazgpu.dev/driver=$L/libnvidia-ptxjitcompiler.so.$V: a dangling symlink, not mounted
hook createContainer root/usr/bin/nvidia-cdi-hook nvidia-cdi-hook create-symlinks --link libcuda.so.$V::/usr/local/nvidia/lib64/libcuda.so.1 --link libcuda.so.1::/usr/local/nvidia/lib64/libcuda.so --link libnvidia-ml.so.$V::/usr/local/nvidia/lib64/libnvidia-ml.so.1 --link libnvidia-allocator.so.$V::/usr/local/nvidia/lib64/libnvidia-allocator.so.1 --link libnvidia-nvvm.so.$V::/usr/local/nvidia/lib64/libnvidia-nvvm.so.4
hook createContainer root/usr/bin/nvidia-cdi-hook nvidia-cdi-hook enable-cuda-compat --host-driver-version=$V
hook createContainer root/usr/bin/nvidia-cdi-hook nvidia-cdi-hook update-ldcache --folder /usr/local/nvidia/lib64 --folder /usr/lib/x86_64-linux-gnu
dra-plugin: $L/libnvidia-ptxjitcompiler.so.$V: a dangling symlink, not mounted
EOF
check 'every path it names is there, the hook too' 'there <hook.spec'

check_output '-X names the hook; one that is not there: no hooks, said so' '
	spec -X /no/nvidia-cdi-hook -g h200.json spec gpu-0 2>&1 >x.spec | grep hook; jq ".containerEdits.hooks" x.spec' <<'EOF'
dra-plugin: /no/nvidia-cdi-hook: No such file or directory; no hooks
null
EOF

check_output 'env mode: the nodes and env only, the whole spec' '
	spec -m env -u 0b6c -g h200.json spec gpu-0 | jq -S -c "del(.devices[0].containerEdits.env[2:])"' <<EOF
{"annotations":{"canhazgpu.dev/cdi-mode":"env","canhazgpu.dev/claim":"offline/spec","canhazgpu.dev/claim-uid":"0b6c"},"cdiVersion":"0.6.0","containerEdits":{"deviceNodes":[{"hostPath":"dev/nvidiactl","path":"/dev/nvidiactl"},{"hostPath":"dev/nvidia-uvm","path":"/dev/nvidia-uvm"},{"hostPath":"dev/nvidia-uvm-tools","path":"/dev/nvidia-uvm-tools"}]},"devices":[{"containerEdits":{"deviceNodes":[{"hostPath":"dev/nvidia0","path":"/dev/nvidia0"}],"env":["CUDA_VISIBLE_DEVICES=$U","NVIDIA_VISIBLE_DEVICES=$U"]},"name":"0b6c-gpus"}],"kind":"k8s.canhazgpu.dev/claim"}
EOF

# --- MIG
check_output 'a MIG device: its parent node and nvidia-cap12, nvidia-cap13 from the access files of gi1 and gi1/ci0' '
	spec -m env -g mig.json spec gpu-0-mig-1g-18gb-0 | summary | grep -v "^annotation canhazgpu.dev/claim"' <<EOF
annotation canhazgpu.dev/cdi-mode=env
node /dev/nvidiactl dev/nvidiactl
node /dev/nvidia-uvm dev/nvidia-uvm
node /dev/nvidia-uvm-tools dev/nvidia-uvm-tools
device offline-gpus
  env CUDA_VISIBLE_DEVICES=$M
  env NVIDIA_VISIBLE_DEVICES=$M
  env CANHAZGPU_CLAIM=offline/spec
  env CANHAZGPU_CLAIM_UID=offline
  env CANHAZGPU_DEVICES=gpu-0-mig-1g-18gb-0
  node /dev/nvidia0 dev/nvidia0
  node /dev/nvidia-caps/nvidia-cap12 dev/nvidia-caps/nvidia-cap12
  node /dev/nvidia-caps/nvidia-cap13 dev/nvidia-caps/nvidia-cap13
EOF

CI=proc/driver/nvidia/capabilities/gpu0/mig/gi1/ci0/access
cp $CI ci0.good
printf 'DeviceFileMinor: x13\nDeviceFileMode: 292\n' >$CI
check_output 'an access file that does not parse: named with its line, that cap left out, the device still passed' '
	spec -m env -g mig.json spec gpu-0-mig-1g-18gb-0 2>mig.err | tee bad.spec | summary | grep -E "mig-caps|  node" && cat mig.err' <<EOF
annotation canhazgpu.dev/mig-caps=gpu-0-mig-1g-18gb-0: $CI:1: DeviceFileMinor is not a number: x13; that capability is not passed
  node /dev/nvidia0 dev/nvidia0
  node /dev/nvidia-caps/nvidia-cap12 dev/nvidia-caps/nvidia-cap12
dra-plugin: gpu-0-mig-1g-18gb-0: $CI:1: DeviceFileMinor is not a number: x13; that capability is not passed
EOF
printf 'DeviceFileMinor: 14\n' >$CI
check_output 'an access file naming a cap node the node lacks: not passed, said so' '
	spec -m env -g mig.json spec gpu-0-mig-1g-18gb-0 2>&1 >bad2.spec; there <bad2.spec' <<EOF
dra-plugin: gpu-0-mig-1g-18gb-0: dev/nvidia-caps/nvidia-cap14 (named by $CI) does not exist on this node, not passed
EOF
printf 'garbage\n' >$CI
check_output 'a line that is no "Key: value": named' '
	spec -m env -g mig.json spec gpu-0-mig-1g-18gb-0 2>&1 >/dev/null' <<EOF
dra-plugin: gpu-0-mig-1g-18gb-0: $CI:1: not a "Key: value" line: garbage; that capability is not passed
EOF
cp ci0.good $CI
sed 's/"gi":1,"ci":0/"gi":null,"ci":null/' mig.json >mig-noids.json
check_output 'GPU and compute instance ids unknown: the parent node only, said so' '
	spec -m env -g mig-noids.json spec gpu-0-mig-1g-18gb-0 2>/dev/null | summary | grep -E "mig-caps|  node"' <<'EOF'
annotation canhazgpu.dev/mig-caps=gpu-0-mig-1g-18gb-0: its GPU instance or compute instance id is unknown, so no nvidia-cap node is passed for it
  node /dev/nvidia0 dev/nvidia0
EOF

# --- minor numbers
mkdir dev8
i=0
for minor in 2 3 0 1 6 7 4 5; do
	gpu $i $minor GPU-ef3dd380-5942-addc-6b66-8cd55589cd4$i
	mknod dev8/nvidia$i c 195 $i 2>/dev/null || : >dev8/nvidia$i
	i=$((i + 1))
done >x8.json
check_output '8 GPUs whose minors are not their indexes: devices are named by minor, gpu-2 (index 0) is /dev/nvidia2, gpu-7 (index 5) /dev/nvidia7' '
	spec -D dev8 -m env -g x8.json spec gpu-2,gpu-7 | summary | grep "  node"' <<'EOF'
  node /dev/nvidia2 dev8/nvidia2
  node /dev/nvidia7 dev8/nvidia7
EOF
check_output 'the devices of two operands, in their order' '
	spec -D dev8 -m env -g x8.json spec gpu-4 gpu-2 | summary | grep -E "  (node|env CUDA)"' <<'EOF'
  env CUDA_VISIBLE_DEVICES=GPU-ef3dd380-5942-addc-6b66-8cd55589cd46,GPU-ef3dd380-5942-addc-6b66-8cd55589cd40
  node /dev/nvidia4 dev8/nvidia4
  node /dev/nvidia2 dev8/nvidia2
EOF
sed 's/"minor":[0-9]*,/"minor":null,/' x8.json >x8-nominor.json
check_output 'minor unknown (null): the index taken for it, said so' '
	spec -D dev8 -m env -g x8-nominor.json spec gpu-3 | summary | grep -E "minor|  node"' <<'EOF'
annotation canhazgpu.dev/minor-numbers=gpu-3: its GPU's minor number is unknown; its index 3 is taken for it (/dev/nvidia3)
  node /dev/nvidia3 dev8/nvidia3
EOF
sed 's/"minor":[0-9]*,//' x8.json >x8-absent.json
check_output 'minor absent: the same' '
	spec -D dev8 -m env -g x8-absent.json spec gpu-3 | jq -r ".devices[0].containerEdits.deviceNodes[].path"' <<'EOF'
/dev/nvidia3
EOF
{ gpu 0 0 "$U"; gpu 1 9 GPU-ef3dd380-5942-addc-6b66-8cd55589cd50; } >gone.json
check_output 'a minor with no /dev node: named, left out, the other GPU passed' '
	spec -m env -g gone.json spec gpu-0,gpu-9 2>gone.err | tee gone.spec | summary | grep -E "device-nodes|  node" && cat gone.err && there <gone.spec' <<'EOF'
annotation canhazgpu.dev/device-nodes=some: dev/nvidia9 does not exist on this node, so no device node is passed for that GPU; the devices are named by CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES only
  node /dev/nvidia0 dev/nvidia0
dra-plugin: some: dev/nvidia9 does not exist on this node, so no device node is passed for that GPU; the devices are named by CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES only
EOF
check_output 'no node at all (no GPU here): none named, no common node, said so' '
	spec -D nodev -m env -g h200.json spec gpu-0 | jq -c "[.annotations[\"canhazgpu.dev/device-nodes\"], .containerEdits, .devices[0].containerEdits.deviceNodes]"' <<'EOF'
["none: nodev/nvidia0 does not exist on this node, so no device node is passed for any GPU; the devices are named by CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES only",null,null]
EOF

# --- the driver's files
mkdir -p root2/usr/lib64
ln -s libcuda.so.$V.real root2/usr/lib64/libcuda.so.$V
echo ELF >root2/usr/lib64/libcuda.so.$V.real
ln -s nowhere root2/usr/lib64/libnvidia-ml.so.$V
check_output 'a library missing, one a dangling symlink: named, never mounted; a symlink to a file is mounted' '
	spec -T root2 -g h200.json spec gpu-0 2>root2.err | tee root2.spec | summary | grep -E "^(mount|annotation canhazgpu.dev/driver)" && cat root2.err && there <root2.spec' <<EOF
annotation canhazgpu.dev/driver=root2/usr/lib64/libnvidia-ml.so.$V: a dangling symlink, not mounted; libnvidia-ml.so.$V: not found in the library directories under root2; no nvidia-cdi-hook in the bin directories under root2: no hooks (no libcuda.so symlinks, no ld cache update)
mount /usr/lib64/libcuda.so.$V root2/usr/lib64/libcuda.so.$V ro,nosuid,nodev,bind
dra-plugin: root2/usr/lib64/libnvidia-ml.so.$V: a dangling symlink, not mounted
dra-plugin: libnvidia-ml.so.$V: not found in the library directories under root2
dra-plugin: no nvidia-cdi-hook in the bin directories under root2: no hooks (no libcuda.so symlinks, no ld cache update)
EOF
check_output 'no driver under the root: nothing mounted, no hooks, said so' '
	spec -T empty -g h200.json spec gpu-0 2>&1 >empty.spec; jq -c "[.containerEdits.mounts, .containerEdits.hooks]" empty.spec' <<EOF
dra-plugin: none: no library of driver $V under empty, so none is mounted: the container has the driver only if the node's runtime adds it
[null,null]
EOF
sed 's/"driver_version":"[^"]*"/"driver_version":null/' h200.json >nover.json
check_output 'records without a driver version: the version from proc/driver/nvidia/version' '
	spec -g nover.json spec gpu-0 2>/dev/null | jq -r ".containerEdits.mounts[0].containerPath"' <<EOF
/usr/local/nvidia/lib64/libcuda.so.$V
EOF
check_output 'and with none there either: nothing mounted, said so' '
	spec -p noproc -g nover.json spec gpu-0 2>/dev/null | jq -r ".annotations[\"canhazgpu.dev/driver\"], .containerEdits.mounts"' <<'EOF'
no driver version known (the gpu records carry none, and noproc/driver/nvidia/version: No such file or directory), so no driver file is mounted
null
EOF

# --- usage
check_output 'a device the records lack: exit 1, named' '
	spec -g h200.json spec gpu-0,gpu-7 2>&1; echo "exit $?"' <<'EOF'
dra-plugin: spec: the gpu records have no device gpu-7
exit 1
EOF
check_output 'usage: spec without devices or records, a bad mode: exit 2' '
	for a in "-g h200.json spec" "spec gpu-0" "-m bogus -g h200.json spec gpu-0"; do
		spec $a >/dev/null 2>&1; echo "exit $?"
	done' <<'EOF'
exit 2
exit 2
exit 2
EOF
# --- the plugin in a container that sees the host's / at host/
mkdir host
cp -a dev proc host/ && cp -a root/. host/
check_output '-H: the files found under the host root, named in the spec as the host names them' '
	dra-plugin -H "$PWD/host" -g h200.json spec gpu-0 2>/dev/null |
		jq -r "[(.containerEdits, .devices[].containerEdits) | (.deviceNodes // [])[], (.mounts // [])[] | .hostPath] | .[]"' <<'EOF'
/dev/nvidiactl
/dev/nvidia-uvm
/dev/nvidia-uvm-tools
/usr/local/nvidia/lib64/libcuda.so.580.159.04
/usr/local/nvidia/lib64/libnvidia-ml.so.580.159.04
/usr/lib/x86_64-linux-gnu/libnvidia-gpucomp.so.580.159.04
/usr/local/nvidia/lib64/libnvidia-allocator.so.580.159.04
/usr/local/nvidia/lib64/libnvidia-nvvm.so.580.159.04
/usr/bin/nvidia-smi
/usr/bin/nvidia-debugdump
/run/nvidia-persistenced/socket
/lib/firmware/nvidia/580.159.04/gsp_ga10x.bin
/lib/firmware/nvidia/580.159.04/gsp_tu10x.bin
/dev/nvidia0
EOF

done_testing
