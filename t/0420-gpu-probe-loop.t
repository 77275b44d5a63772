#!/bin/sh
# gpu-probe -i: probe after probe, each good one closed by a flush record,
# a failed one writing nothing; -P's textfile; claim-make publishing per
# flush.
. "$(dirname "$0")/lib.sh"
F=$FIXTURES/gpu-probe
export K8SHAZGPU_NOW=86400

# An nvidia-smi whose first answer is garbage and later ones are an H100 x8.
cat >nvidia-smi <<SMI
#!/bin/sh
n=\$(cat calls 2>/dev/null || echo 0); echo \$((n + 1)) >calls
case "\$*" in *--query-gpu*) ;; *) exit 0 ;; esac
[ "\$n" = 0 ] && { echo "this is not a csv line"; exit 0; }
cat "$F/h100x8.csv"
SMI
chmod +x nvidia-smi

check_output 'a failed probe writes nothing; the next good one its 8 records and a flush' '
	gpu-probe -q -i 1 -N n1 -s ./nvidia-smi 2>err | head -n 9 | jq -r .kind | uniq -c | sed "s/^ *//"; grep -c "nothing written this cycle" err' <<'X'
8 gpu
1 flush
1
X

check_output 'two cycles of a topology, each closed by a flush' \
	'gpu-probe -i 1 -t "$TOP/manifests/sim/test.yaml" -n l4 | head -n 6 | jq -r ".kind + \" \" + (.index // \"\" | tostring)"' <<'X'
gpu 0
gpu 1
flush 
gpu 0
gpu 1
flush 
X

check_output 'claim-make publishes at every flush, and the -N nodes each time' '
	{ gpu-probe -t "$TOP/manifests/sim/test.yaml" -n l4; echo "{\"kind\":\"flush\"}";
	  gpu-probe -t "$TOP/manifests/sim/test.yaml" -n h100; echo "{\"kind\":\"flush\"}"; } |
	claim-make -N gone | jq -r "[.kind, .metadata.name] | join(\" \")"' <<'X'
Node gone
Node l4
GPUNode l4
GPUNode l4
ResourceSlice l4-0.gpu.canhazgpu.dev
Node gone
Node h100
GPUNode h100
GPUNode h100
ResourceSlice h100-0.gpu.canhazgpu.dev
X

check_output 'nothing after the last flush: nothing more published' \
	'printf "%s\n" "{\"kind\":\"flush\"}" | claim-make -N gone | jq -r .metadata.name' <<'X'
gone
X

check_output '-P writes node-exporter textfile metrics' '
	gpu-probe -t "$TOP/manifests/sim/test.yaml" -n l4 -P l4.prom >/dev/null &&
	grep -v "^#" l4.prom | sed "s/uuid=\"[^\"]*\"/uuid=U/" | grep "index=\"0\""' <<'X'
k8shazgpu_gpu_memory_total_mib{node="l4",uuid=U,index="0",mig=""} 23034
k8shazgpu_gpu_memory_used_mib{node="l4",uuid=U,index="0",mig=""} 0
k8shazgpu_gpu_utilization_percent{node="l4",uuid=U,index="0",mig=""} 0
k8shazgpu_gpu_temperature_celsius{node="l4",uuid=U,index="0",mig=""} 30
k8shazgpu_gpu_ecc_errors{node="l4",uuid=U,index="0",mig=""} 0
k8shazgpu_gpu_health{node="l4",uuid=U,index="0",mig=""} 0
X

check 'a textfile that cannot be written fails the probe' \
	'must_fail 1 gpu-probe -t "$TOP/manifests/sim/test.yaml" -n l4 -P /nonexistent/x.prom >/dev/null 2>err &&
	 grep -q "^gpu-probe: /nonexistent/x.prom.tmp" err'
done_testing
