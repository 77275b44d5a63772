#!/bin/sh
# gpu-probe's stable facts: minor numbers, CUDA version, brand, addressing
# mode and MIG instance ids from nvidia-smi -q -x; minor numbers from
# /proc/driver/nvidia when -q -x cannot say; PCIe root, NUMA node and
# machine from sysfs. The real H200 capture, a synthetic 8-GPU node whose
# minors are not its indexes, MIG; bad input named by file and
# line:column; in a loop, -q -x once, and again when the driver changes.
. "$(dirname "$0")/lib.sh"

cp -R "$FIXTURES"/gpu-probe/* . || exit 1

H200_ROOTS='-R h200-root/proc -Y h200-root/sys'

# ---- the real H200 ----

check_output 'replay: the H200 with its -q -x and its /proc and sysfs' \
	"probe -r h200.csv -m h200.list -x h200.xml $H200_ROOTS" <<'EOF'
{"kind":"gpu","node":"node1","index":0,"minor":0,"uuid":"GPU-ef3dd380-5942-addc-6b66-8cd55589cd49","name":"NVIDIA H200","product":"NVIDIA-H200","brand":"NVIDIA","memory_mib":143771,"memory_used_mib":0,"util_pct":0,"temp_c":39,"power_w":82,"power_limit_w":700,"ecc_errors":0,"driver_version":"580.159.04","cuda_version":"13.0","compute_cap":"9.0","pci_bus_id":"00000000:00:06.0","pcie_root":"pci0000:00","numa_node":0,"pci_class":"0x030200","addressing_mode":"None","machine":null,"mig_enabled":false,"mig":null,"health":"ok","health_reasons":[]}
exit 0
gpu-probe: h200-root/sys/class/dmi/id/product_name: No such file or directory: machine null
EOF

check_output 'replay: without -x the minor comes from /proc, the CUDA version is unknown; without -R it is null too' \
	"pj '[.minor, .cuda_version, .brand, .pcie_root]' -q -r h200.csv $H200_ROOTS;
	pj '[.minor, .cuda_version, .brand, .pcie_root]' -r h200.csv" <<'EOF'
[0,null,null,"pci0000:00"]
exit 0
[null,null,null,null]
exit 0
EOF

check_output 'the record is one claim-make publishes' \
	"gpu-probe -N node1 -q -r h200.csv -x h200.xml $H200_ROOTS | claim-make | jq -r .kind" <<'EOF'
Node
GPUNode
GPUNode
ResourceSlice
EOF

check_output 'claim-make checks the new keys; records without them (old captures) stay valid' \
	"printf '%s\\n' '{\"kind\":\"gpu\",\"node\":\"n\",\"index\":0,\"minor\":-1,\"health\":\"ok\"}' \
		'{\"kind\":\"gpu\",\"node\":\"n\",\"index\":1,\"numa_node\":\"0\",\"health\":\"ok\"}' \
		'{\"kind\":\"gpu\",\"node\":\"n\",\"index\":2,\"machine\":7,\"health\":\"ok\"}' \
		'{\"kind\":\"gpu\",\"node\":\"n\",\"index\":3,\"health\":\"ok\"}' |
	claim-make 2>&1 >/dev/null; echo \"exit \$?\"" <<'EOF'
claim-make: <stdin>:1: gpu: field "minor" must be an integer from 0 to 2147483647, not -1
claim-make: <stdin>:2: gpu: field "numa_node" must be an integer from 0 to 2147483647, not "0"
claim-make: <stdin>:3: gpu: field "machine" must be a string, not 7
exit 1
EOF

# ---- 8 GPUs whose minors are not their indexes ----

# sysfs as the kernel lays it out: two root complexes, one per NUMA node;
# each bus/pci/devices entry a link into devices/.
mkdir -p sys8/bus/pci/devices sys8/class/dmi/id
i=0
for bus in 18 2a 3a 5d 9a ab ba db; do
	if [ $i -lt 4 ]; then root=pci0000:00 node=0; else root=pci0000:80 node=1; fi
	mkdir -p sys8/devices/$root/0000:$bus:00.0
	echo $node >sys8/devices/$root/0000:$bus:00.0/numa_node
	# a 3D controller, as data-centre GPUs are; the last a VGA one
	if [ $i -lt 7 ]; then echo 0x030200; else echo 0x030000; fi >sys8/devices/$root/0000:$bus:00.0/class
	ln -s ../../../devices/$root/0000:$bus:00.0 sys8/bus/pci/devices/0000:$bus:00.0
	i=$((i + 1))
done
printf '  DGX H100 \n' >sys8/class/dmi/id/product_name
check_output 'replay: 8 H100s, minors in probe order, not the index; PCIe roots, NUMA nodes and PCI classes; the machine trimmed' \
	"pj '[.index, .minor, .pci_bus_id, .pcie_root, .numa_node, .pci_class, .addressing_mode, .cuda_version, .machine]' -r h100x8.csv -x h100x8.xml -Y sys8" <<'EOF'
[0,2,"00000000:18:00.0","pci0000:00",0,"0x030200",null,"12.4","DGX H100"]
[1,3,"00000000:2A:00.0","pci0000:00",0,"0x030200",null,"12.4","DGX H100"]
[2,0,"00000000:3A:00.0","pci0000:00",0,"0x030200",null,"12.4","DGX H100"]
[3,1,"00000000:5D:00.0","pci0000:00",0,"0x030200",null,"12.4","DGX H100"]
[4,6,"00000000:9A:00.0","pci0000:80",1,"0x030200",null,"12.4","DGX H100"]
[5,7,"00000000:AB:00.0","pci0000:80",1,"0x030200",null,"12.4","DGX H100"]
[6,4,"00000000:BA:00.0","pci0000:80",1,"0x030200",null,"12.4","DGX H100"]
[7,5,"00000000:DB:00.0","pci0000:80",1,"0x030000",null,"12.4","DGX H100"]
exit 0
EOF

echo -1 >sys8/devices/pci0000:00/0000:18:00.0/numa_node
rm sys8/bus/pci/devices/0000:2a:00.0 sys8/class/dmi/id/product_name
rm sys8/devices/pci0000:00/0000:3a:00.0/numa_node
check_output 'sysfs: NUMA node -1 is none; a missing device or file is null, said once' \
	"pj '[.index, .pcie_root, .numa_node, .machine]' -r h100x8.csv -x h100x8.xml -Y sys8 | sed -n '1,3p;9,\$p'" <<'EOF'
[0,"pci0000:00",null,null]
[1,null,null,null]
[2,"pci0000:00",null,null]
exit 0
gpu-probe: sys8/class/dmi/id/product_name: No such file or directory: machine null
gpu-probe: sys8/bus/pci/devices/0000:2a:00.0/numa_node: No such file or directory: numa_node null
gpu-probe: sys8/bus/pci/devices/0000:2a:00.0: No such file or directory: pcie_root null
gpu-probe: sys8/bus/pci/devices/0000:2a:00.0/class: No such file or directory: pci_class null
EOF

# ---- MIG ----

check_output 'replay: new-style MIG UUIDs get gi/ci from -q -x by device number; minor of the parent' \
	"pj 'select(.index < 2) | [.index, .minor, .uuid[0:4], .mig.device, .mig.gi, .mig.ci]' -q -r h200-mig.csv -m h200-mig.list -x h200-mig.xml" <<'EOF'
[0,0,"GPU-",null,null,null]
[0,0,"MIG-",0,3,0]
[0,0,"MIG-",1,4,0]
[0,0,"MIG-",2,5,0]
[0,0,"MIG-",3,13,0]
[1,1,"GPU-",null,null,null]
[1,1,"MIG-",0,3,0]
[1,1,"MIG-",1,4,0]
[1,1,"MIG-",2,5,0]
[1,1,"MIG-",3,13,0]
exit 0
EOF

check_output 'replay: old-style MIG UUIDs keep the ids they carry' \
	"pj 'select(.mig) | [.mig.device, .mig.gi, .mig.ci]' -q -r a100-mig.csv -m a100-mig.list -x h200-mig.xml" <<'EOF'
[0,1,0]
[1,2,0]
[2,2,1]
exit 0
EOF

# ---- bad input: named by file and line:column, the records still written ----

head -c 3000 h200.xml >truncated.xml
check_output 'a truncated -q -x: named with line:column; minors from /proc' \
	"pj '[.minor, .cuda_version, .brand, .numa_node]' -r h200.csv -x truncated.xml $H200_ROOTS" <<'EOF'
[0,null,null,0]
exit 0
gpu-probe: truncated.xml:86:6: not nvidia-smi -q -x output: unclosed token
gpu-probe: h200-root/sys/class/dmi/id/product_name: No such file or directory: machine null
EOF

printf 'NVIDIA-SMI has failed because it couldn'"'"'t communicate with the NVIDIA driver.\n' >failed.xml
printf '<?xml version="1.0"?>\n<html><body/></html>\n' >html.xml
printf '<?xml version="1.0"?>\n<!DOCTYPE l [\n<!ENTITY a "aaaaaaaa">\n]>\n<nvidia_smi_log>&a;</nvidia_smi_log>\n' >entity.xml
check_output 'not XML, another document, entities: refused, the facts null' \
	"for f in failed html entity; do pj '[.minor, .cuda_version]' -q -r h200.csv -x \$f.xml; done" <<'EOF'
[null,null]
exit 0
gpu-probe: failed.xml:1:1: not nvidia-smi -q -x output: syntax error
[null,null]
exit 0
gpu-probe: html.xml:2:1: not nvidia-smi -q -x output: the root element is not <nvidia_smi_log>
[null,null]
exit 0
gpu-probe: entity.xml:3:12: not nvidia-smi -q -x output: it declares an entity
EOF

sed 's|<minor_number>0</minor_number>||; s|<product_brand>NVIDIA</product_brand>|<product_brand>[N/A]</product_brand>|; s|<cuda_version>13.0</cuda_version>|<cuda_version>13.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0</cuda_version>|' h200.xml >nominor.xml
check_output 'a GPU without <minor_number>: said, the minor from /proc; N/A is absent; a value too long is left out' \
	"pj '[.minor, .brand, .cuda_version, .addressing_mode]' -q -r h200.csv -x nominor.xml $H200_ROOTS;
	pj '[.minor]' -q -r h200.csv -x nominor.xml" <<'EOF'
[0,null,null,"None"]
exit 0
gpu-probe: nominor.xml:6:2: <cuda_version>: "13.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0..." longer than 64 bytes: left out
gpu-probe: nominor.xml:8:2: GPU GPU-ef3dd380-5942-addc-6b66-8cd55589cd49 has no <minor_number>
[null]
exit 0
gpu-probe: nominor.xml:6:2: <cuda_version>: "13.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0..." longer than 64 bytes: left out
gpu-probe: nominor.xml:8:2: GPU GPU-ef3dd380-5942-addc-6b66-8cd55589cd49 has no <minor_number>
EOF

info=proc/driver/nvidia/gpus/0000:00:06.0/information
mkdir -p bad-root/proc/driver/nvidia/gpus/0000:00:06.0
sed 's/^Device Minor:.*/Device Minor: \t zero/' h200-root/$info >bad-root/$info
check_output 'an information file that does not parse: named with line:column, the minor null' \
	"pj '[.minor, .cuda_version]' -q -r h200.csv -R bad-root/proc;
	printf 'Model: NVIDIA H200\njunk\n' >bad-root/$info;
	pj '[.minor]' -q -r h200.csv -R bad-root/proc" <<'EOF'
[null,null]
exit 0
gpu-probe: bad-root/proc/driver/nvidia/gpus/0000:00:06.0/information:9:17: Device Minor: "zero" is not a number
[null]
exit 0
gpu-probe: bad-root/proc/driver/nvidia/gpus/0000:00:06.0/information:2:1: not a "name: value" line: "junk"
EOF

check_output 'usage: -x only with -r; -R and -Y not with -t' \
	'for a in "-x h200.xml" "-t x.yaml -R /proc" "-t x.yaml -Y /sys"; do gpu-probe $a >/dev/null 2>&1; echo "exit $?"; done' <<'EOF'
exit 2
exit 2
exit 2
EOF

# ---- topology ----

cat >minors.yaml <<'EOF'
defaults: {product: NVIDIA-H100-80GB-HBM3, memoryMiB: 81559, cudaVersion: "12.4"}
nodes:
- name: a
  gpus: 4
  minors: [2, 3, 0, 1]
- name: b
  gpus: 2
- name: c
  gpus: 2
  minors: [0, 0]
- name: d
  gpus: 2
  minors: [0]
EOF
check_output 'topology: minors from the node, else the index; bad lists refused' \
	"pj '[.node, .index, .minor, .cuda_version, .brand]' -t minors.yaml;
	sed -i '/^- name: c/,\$d' minors.yaml;
	pj '[.node, .index, .minor, .cuda_version, .brand]' -t minors.yaml" <<'EOF'
exit 1
gpu-probe: minors.yaml: node "c": minors: 1: 0 twice
gpu-probe: minors.yaml: node "d": minors must list one minor number per GPU (2)
["a",0,2,"12.4",null]
["a",1,3,"12.4",null]
["a",2,0,"12.4",null]
["a",3,1,"12.4",null]
["b",0,0,"12.4",null]
["b",1,1,"12.4",null]
exit 0
EOF

# ---- the loop: facts read once, again when they can have changed ----

# An nvidia-smi that logs its calls: $CSV (default the H200's), its
# driver version $NEW_DRIVER from the CSV call number $CHANGE_AT on; -L
# prints $LIST, $LIST2 from the -L call number $LIST_AT on; -q -x prints
# $XML.
cat >smi <<'EOF'
#!/bin/sh
echo "$*" >>smi.log
case $1 in
--query-gpu=*)
	n=$(grep -c '^--query-gpu' smi.log)
	if [ "$n" -ge "${CHANGE_AT:-99}" ]; then
		sed "s/580\.159\.04/$NEW_DRIVER/" "${CSV:-h200.csv}"
	else
		cat "${CSV:-h200.csv}"
	fi ;;
-L)
	n=$(grep -c '^-L' smi.log)
	if [ "$n" -ge "${LIST_AT:-99}" ]; then cat "$LIST2"; else cat "$LIST"; fi ;;
-q) cat "$XML" ;;
esac
EOF
chmod +x smi

# loop N: the calls of the first N probes of a loop (2 lines each).
loop() {
	rm -f smi.log
	gpu-probe -N node1 -q -i 1 -s ./smi $H200_ROOTS 2>loop.err | head -n $((2 * $1)) >loop.out
	jq -r '"\(.kind) \(.minor) \(.driver_version)"' loop.out
	grep -v '^--query-gpu' smi.log | sed 's/^/call: /'
}

check_output 'loop: three probes, one -q -x' \
	'XML=h200.xml loop 3' <<'EOF'
gpu 0 580.159.04
flush null null
gpu 0 580.159.04
flush null null
gpu 0 580.159.04
flush null null
call: -q -x
EOF

check_output 'loop: a new driver version in the CSV, -q -x again' \
	'XML=h200.xml CHANGE_AT=3 NEW_DRIVER=580.165.02 loop 4' <<'EOF'
gpu 0 580.159.04
flush null null
gpu 0 580.159.04
flush null null
gpu 0 580.165.02
flush null null
gpu 0 580.165.02
flush null null
call: -q -x
call: -q -x
EOF

check_output 'loop: a failed -q -x is said once and not called again; minors from /proc' \
	'XML=truncated.xml loop 3; cat loop.err' <<'EOF'
gpu 0 580.159.04
flush null null
gpu 0 580.159.04
flush null null
gpu 0 580.159.04
flush null null
call: -q -x
gpu-probe: nvidia-smi -q -x:86:6: not nvidia-smi -q -x output: unclosed token
gpu-probe: nvidia-smi -q -x failed: minor numbers from h200-root/proc/driver/nvidia, cuda_version null; not called again before the driver version changes
EOF

grep -v 'Device  3' h200-mig.list >h200-mig-3.list
check_output 'loop: a new MIG layout in -L, -q -x again' '
	rm -f smi.log
	CSV=h200-mig.csv LIST=h200-mig.list LIST2=h200-mig-3.list LIST_AT=3 XML=h200-mig.xml \
		gpu-probe -N node1 -q -i 1 -s ./smi 2>/dev/null |
		awk "{ n++ } /\"flush\"/ { print n - 1 \" records\"; n = 0; if (++f == 4) exit }"
	awk "/^--query-gpu/ && ++q == 5 { exit } !/^--query-gpu/" smi.log' <<'EOF'
20 records
20 records
16 records
16 records
-L
-q -x
-L
-L
-q -x
-L
EOF

check_output '-F: no facts, and no -q -x call' \
	'rm -f smi.log; XML=h200.xml gpu-probe -N node1 -F -s ./smi $H200_ROOTS | jq -c "[.minor, .cuda_version, .pcie_root, .brand]"; wc -l <smi.log' <<'EOF'
[null,null,null,null]
1
EOF

done_testing
