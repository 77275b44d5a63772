#!/bin/sh
# gpu-check on a fake node laid out as the real H200 was: an nvidia-smi
# that answers with the H200's captures, its /proc and /sys files, device
# nodes made with mknod, a driver root whose libcuda answers as the
# H200's did. The report, exactly; the captures in the tarball replay to
# the same records; and, where runc (the sim's real node's) is at hand
# and we are root, CUDA in a container given only the CDI spec's edits
# sees the claimed GPU.
. "$(dirname "$0")/lib.sh"

command -v "${CC:-cc}" >/dev/null || skip_all 'no C compiler for the test libcuda'
G=$FIXTURES/gpu-probe
V=580.159.04

# nvidia-smi: the H200's outputs; every call logged
cat >nvidia-smi <<EOF
#!/bin/sh
echo "\$*" >>"$PWD/smi.log"
case \$1 in
--query-gpu=*) cat "$G/h200.csv" ;;
-L) cat "$G/h200.list" ;;
-q) cat "$G/h200.xml" ;;
--version) sed -n '1,4p' "$TOP/t/fixtures/gpu-probe/h200-version.txt" ;;
--query-compute-apps=*) ;;
*) echo "nvidia-smi: \$*: not faked" >&2; exit 1 ;;
esac
EOF
chmod +x nvidia-smi
# proc/ and sys/: the H200's, from the fixture tree; dev/: its nodes
cp -R "$G/h200-root/proc" "$G/h200-root/sys" .
mkdir -p dev/nvidia-caps
for n in "nvidia0 195 0" "nvidiactl 195 255" "nvidia-uvm 238 0" "nvidia-uvm-tools 238 1"; do
	set -- $n
	mknod "dev/$1" c "$2" "$3" 2>/dev/null || : >"dev/$1"
done
# root/: the driver root, its libcuda one that answers as the H200's
L=root/usr/local/nvidia/lib64
mkdir -p $L root/usr/bin
cat >fakecuda.c <<'EOF'
#include <string.h>
int cuInit(unsigned f) { (void)f; return 0; }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuDeviceGetCount(int *n) { *n = 1; return 0; }
int cuDeviceGet(int *d, int o) { *d = o; return 0; }
int cuDeviceGetName(char *s, int n, int d) { (void)d; strncpy(s, "NVIDIA H200", n); return 0; }
int cuDeviceGetUuid(unsigned char *u, int d) {
	static const unsigned char h200[16] = {0xef,0x3d,0xd3,0x80,0x59,0x42,0xad,0xdc,0x6b,0x66,0x8c,0xd5,0x55,0x89,0xcd,0x49};
	(void)d; memcpy(u, h200, 16); return 0; }
int cuDeviceTotalMem_v2(unsigned long *m, int d) { (void)d; *m = 143771UL << 20; return 0; }
int cuDeviceGetAttribute(int *v, int a, int d) {
	(void)d; switch (a) { case 75: *v = 9; break; case 34: *v = 6; break; default: *v = 0; } return 0; }
int cuGetErrorName(int e, const char **s) { (void)e; *s = "CUDA_ERROR_UNKNOWN"; return 0; }
EOF
${CC:-cc} -shared -fPIC -o $L/libcuda.so.$V fakecuda.c || exit 1
echo ELF >$L/libnvidia-ml.so.$V
printf '#!/bin/sh\n' >root/usr/bin/nvidia-smi

ROOT=$PWD/root
check() {
	gpu-check -n -s ./nvidia-smi -P proc -Y sys -D dev -R root -N h200 -o h200.tar.gz "$@" >report
	st=$?
	sed 's/[0-9][0-9]* ms/N ms/g' report
	return $st
}
check_output 'the report: captures, live and replayed records alike, labels, the slice, the spec' '
	check; echo "exit $?"' <<EOF
capture: query.csv N ms, list.txt N ms, q.xml N ms, version.txt N ms, apps.csv N ms
gpu-probe: live 1 records in N ms; the capture replays to the same devices and facts
  GPU 0 minor 0 NVIDIA H200 GPU-ef3dd380-5942-addc-6b66-8cd55589cd49 bus 00000000:00:06.0 driver 580.159.04 CUDA 13.0
labels: 26 nvidia.com/ labels (labels.txt)
slice: gpu-0 (slice.ndjson)
cdi: the spec of a claim of gpu-0: 4 device nodes, 3 mounts, 0 hooks (spec.json)
  dra-plugin: no nvidia-cdi-hook in the bin directories under $ROOT: no hooks (no libcuda.so symlinks, no ld cache update)
container: not run (-n)
captures: h200.tar.gz
gpu-check: all checks passed
exit 0
EOF

check_output 'nvidia-smi asked only queries: the CSV query twice (live, capture), -L, -q -x once each, --version, compute-apps' '
	sed "s/=[^ ]*//" smi.log | LC_ALL=C sort | uniq -c | sed "s/^ *//"' <<'EOF'
1 --query-compute-apps --format=csv,noheader
2 --query-gpu --format=csv,noheader,nounits
1 --version
1 -L
2 -q -x
EOF

check_output 'the tarball: the captures, the driver'"'"'s files and sysfs as the kernel lays them out, the results' '
	tar tzf h200.tar.gz | LC_ALL=C sort' <<'EOF'
capture/
capture/apps.csv
capture/dev.txt
capture/labels.txt
capture/list.txt
capture/live.ndjson
capture/objects.ndjson
capture/proc/
capture/proc/driver/
capture/proc/driver/nvidia/
capture/proc/driver/nvidia/gpus/
capture/proc/driver/nvidia/gpus/0000:00:06.0/
capture/proc/driver/nvidia/gpus/0000:00:06.0/information
capture/q.xml
capture/query.csv
capture/replay.ndjson
capture/slice.ndjson
capture/spec.json
capture/sys/
capture/sys/bus/
capture/sys/bus/pci/
capture/sys/bus/pci/devices/
capture/sys/bus/pci/devices/0000:00:06.0
capture/sys/devices/
capture/sys/devices/pci0000:00/
capture/sys/devices/pci0000:00/0000:00:06.0/
capture/sys/devices/pci0000:00/0000:00:06.0/class
capture/sys/devices/pci0000:00/0000:00:06.0/numa_node
capture/version.txt
EOF

check_output 'the captures are fixtures: gpu-probe replays them to the record the live probe wrote' '
	tar xzf h200.tar.gz && cd capture &&
	gpu-probe -N h200 -r query.csv -m list.txt -x q.xml -R proc -Y sys >again.ndjson &&
	jq -c "del(.memory_used_mib, .util_pct, .temp_c, .power_w)" again.ndjson >a && jq -c "del(.memory_used_mib, .util_pct, .temp_c, .power_w)" live.ndjson >b &&
	cmp a b && jq -c "[.minor, .cuda_version, .pcie_root, .numa_node, .pci_class]" again.ndjson' <<'EOF'
[0,"13.0","pci0000:00",0,"0x030200"]
EOF

check_output 'no nvidia-smi, no GPU, usage' '
	out gpu-check -s ./nothing -o x.tar.gz
	printf "#!/bin/sh\n" >empty-smi && chmod +x empty-smi
	out gpu-check -n -s ./empty-smi -P proc -Y sys -D dev -o x.tar.gz 2>&1 | sed "s/[0-9][0-9]* ms/N ms/g"
	out gpu-check extra' <<'EOF'
exit 1
gpu-check: ./nothing: not found (-s PATH names it)
capture: query.csv N ms, list.txt N ms, q.xml N ms, version.txt N ms, apps.csv N ms
exit 1
gpu-check: nvidia-smi gave no GPU; nothing more to check
exit 2
usage: gpu-check [-n] [-o tarball] [-s nvidia-smi] [-R driver-root] [-P proc] [-Y sys] [-D dev] [-r runc] [-N node]
EOF

# CUDA under runc, given only the spec's edits: the sim's real node's runc
RUNC=$(node-build bindir 2>/dev/null)/runc
if [ "$(id -u)" = 0 ] && [ -x "$RUNC" ]; then
	check_output 'runc: cuda-query in a container given only the spec'"'"'s edits sees the claimed GPU' '
		gpu-check -r "$RUNC" -s ./nvidia-smi -P proc -Y sys -D dev -R root -N h200 -o h200.tar.gz 2>&1 |
			sed -n "s/[0-9][0-9]* ms/N ms/g; /^cdi:\|^container:\|^gpu-check:/p"' <<'EOF'
cdi: the spec of a claim of gpu-0: 4 device nodes, 3 mounts, 0 hooks (spec.json)
container: runc with only the spec's edits: CUDA 13.0 sees NVIDIA H200 GPU-ef3dd380-5942-addc-6b66-8cd55589cd49 (N ms)
gpu-check: all checks passed
EOF
else
	t_result 0 "runc: cuda-query under runc # SKIP not root, or no runc in $(node-build bindir 2>/dev/null)"
fi

check_output 'the bundle: the same report from the tarball make gpu-check-bundle writes, with only /usr/bin and /bin on the path' '
	bundle-build -b "$BUILD" -o gpu-check.tar.gz -s "$TOP/scripts/gpu-check" gpu-probe claim-make dra-plugin cuda-query jq >/dev/null &&
	mkdir b && tar xzf gpu-check.tar.gz -C b && ls b/gpu-check/bin | tr "\n" " " && echo &&
	env -i PATH=/usr/bin:/bin b/gpu-check/gpu-check -n -s ./nvidia-smi -P proc -Y sys -D dev -R root -N h200 -o h200.tar.gz >b.report &&
	sed "s/[0-9][0-9]* ms/N ms/g" report >r1 && sed "s/[0-9][0-9]* ms/N ms/g" b.report >r2 && diff r1 r2 && tail -n 1 r2' <<'EOF'
claim-make cuda-query dra-plugin gpu-probe jq 
gpu-check: all checks passed
EOF

check_output '-h' 'gpu-check -h | head -n 1' <<'EOF'
usage: gpu-check [-n] [-o tarball] [-s nvidia-smi] [-R driver-root] [-P proc] [-Y sys] [-D dev] [-r runc] [-N node]
EOF
done_testing
