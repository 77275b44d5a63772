#!/bin/sh
# gpu-probe -P: the node-exporter textfile. Label values (node, uuid, MIG
# profile) are escaped as the text format wants (\\, \", \n), values are
# the records' integers as they are, every line passes stat-serve -c, and
# the file is replaced whole through a temporary file of its own.
. "$(dirname "$0")/lib.sh"
F=$FIXTURES/gpu-probe

# A GPU whose UUID holds a double quote and a backslash, and a hot one.
cat >odd.csv <<'X'
0, GPU-"q"\b, NVIDIA H100 80GB HBM3, 00000000:18:00.0, 81559, 1, 0, 31, 69.54, 700.00, 0, 550.90.07, Disabled, 9.0
1, GPU-plain, NVIDIA H100 80GB HBM3, 00000000:2A:00.0, 81559, 78112, 97, 95, 612.37, 700.00, 999999999999999, 550.90.07, Disabled, 9.0
X

check_output 'quote and backslash in the node name and uuid: escaped in every sample' '
	gpu-probe -N "a\"b\\c" -r odd.csv -P out.prom >/dev/null 2>err; echo "exit $?"; cat out.prom' <<'X'
exit 0
# HELP k8shazgpu_gpu_memory_total_mib Device memory, MiB.
# TYPE k8shazgpu_gpu_memory_total_mib gauge
k8shazgpu_gpu_memory_total_mib{node="a\"b\\c",uuid="GPU-\"q\"\\b",index="0",mig=""} 81559
k8shazgpu_gpu_memory_total_mib{node="a\"b\\c",uuid="GPU-plain",index="1",mig=""} 81559
# HELP k8shazgpu_gpu_memory_used_mib Device memory in use, MiB.
# TYPE k8shazgpu_gpu_memory_used_mib gauge
k8shazgpu_gpu_memory_used_mib{node="a\"b\\c",uuid="GPU-\"q\"\\b",index="0",mig=""} 1
k8shazgpu_gpu_memory_used_mib{node="a\"b\\c",uuid="GPU-plain",index="1",mig=""} 78112
# HELP k8shazgpu_gpu_utilization_percent GPU utilization, percent.
# TYPE k8shazgpu_gpu_utilization_percent gauge
k8shazgpu_gpu_utilization_percent{node="a\"b\\c",uuid="GPU-\"q\"\\b",index="0",mig=""} 0
k8shazgpu_gpu_utilization_percent{node="a\"b\\c",uuid="GPU-plain",index="1",mig=""} 97
# HELP k8shazgpu_gpu_temperature_celsius GPU temperature.
# TYPE k8shazgpu_gpu_temperature_celsius gauge
k8shazgpu_gpu_temperature_celsius{node="a\"b\\c",uuid="GPU-\"q\"\\b",index="0",mig=""} 31
k8shazgpu_gpu_temperature_celsius{node="a\"b\\c",uuid="GPU-plain",index="1",mig=""} 95
# HELP k8shazgpu_gpu_power_watts Power draw, watts.
# TYPE k8shazgpu_gpu_power_watts gauge
k8shazgpu_gpu_power_watts{node="a\"b\\c",uuid="GPU-\"q\"\\b",index="0",mig=""} 70
k8shazgpu_gpu_power_watts{node="a\"b\\c",uuid="GPU-plain",index="1",mig=""} 612
# HELP k8shazgpu_gpu_ecc_errors Uncorrected volatile ECC errors.
# TYPE k8shazgpu_gpu_ecc_errors gauge
k8shazgpu_gpu_ecc_errors{node="a\"b\\c",uuid="GPU-\"q\"\\b",index="0",mig=""} 0
k8shazgpu_gpu_ecc_errors{node="a\"b\\c",uuid="GPU-plain",index="1",mig=""} 999999999999999
# HELP k8shazgpu_gpu_health 0 ok, 1 warn, 2 unhealthy.
# TYPE k8shazgpu_gpu_health gauge
k8shazgpu_gpu_health{node="a\"b\\c",uuid="GPU-\"q\"\\b",index="0",mig=""} 0
k8shazgpu_gpu_health{node="a\"b\\c",uuid="GPU-plain",index="1",mig=""} 2
X
check 'that textfile is a valid exposition' 'stat-serve -c out.prom'

# A line feed never reaches the writer (gpu-probe refuses control
# characters in names); its escape is t/0810-prom.t's. A value ending in a
# backslash is the one an unescaping reader would take for an escaped quote.
check_output 'a node name ending in a backslash, and UTF-8: escaped, valid' '
	gpu-probe -N "\\\"é✓\\" -r odd.csv -P end.prom >/dev/null 2>err; echo "exit $?"
	grep "^k8shazgpu_gpu_health" end.prom; stat-serve -c end.prom && echo valid' <<'X'
exit 0
k8shazgpu_gpu_health{node="\\\"é✓\\",uuid="GPU-\"q\"\\b",index="0",mig=""} 0
k8shazgpu_gpu_health{node="\\\"é✓\\",uuid="GPU-plain",index="1",mig=""} 2
valid
X
check_output 'MIG devices: the profile label, and no sample where a record has no value' '
	gpu-probe -q -N n -r "$F/a100-mig.csv" -m "$F/a100-mig.list" -P mig.prom >/dev/null &&
	grep "^k8shazgpu_gpu_utilization\|^k8shazgpu_gpu_health" mig.prom; stat-serve -c mig.prom && echo valid' <<'X'
k8shazgpu_gpu_utilization_percent{node="n",uuid="GPU-1e7d4c2b-9a60-3f85-b1d4-2e8c7f5a3001",index="1",mig=""} 0
k8shazgpu_gpu_health{node="n",uuid="GPU-1e7d4c2b-9a60-3f85-b1d4-2e8c7f5a3000",index="0",mig=""} 0
k8shazgpu_gpu_health{node="n",uuid="MIG-GPU-1e7d4c2b-9a60-3f85-b1d4-2e8c7f5a3000/1/0",index="0",mig="3g.40gb"} 0
k8shazgpu_gpu_health{node="n",uuid="MIG-GPU-1e7d4c2b-9a60-3f85-b1d4-2e8c7f5a3000/2/0",index="0",mig="1c.3g.40gb"} 0
k8shazgpu_gpu_health{node="n",uuid="MIG-GPU-1e7d4c2b-9a60-3f85-b1d4-2e8c7f5a3000/2/1",index="0",mig="2c.3g.40gb"} 0
k8shazgpu_gpu_health{node="n",uuid="GPU-1e7d4c2b-9a60-3f85-b1d4-2e8c7f5a3001",index="1",mig=""} 0
valid
X

# ---- replaced whole ----

check_output 'the textfile is replaced by a new file; no temporary file is left' '
	mkdir -p tf && echo old >tf/k.prom && ln tf/k.prom old.link &&
	gpu-probe -N n -r odd.csv -P tf/k.prom >/dev/null 2>&1;
	ls tf; cat old.link; grep -c "^k8shazgpu" tf/k.prom' <<'X'
k.prom
old
14
X
check_output 'a file lying where its temporary file goes is replaced, not written through' '
	mkdir -p tf2 && echo keep >victim &&
	sh -c "ln -s ../victim tf2/k.prom.tmp.\$\$ && exec gpu-probe -N n -r odd.csv -P tf2/k.prom" >/dev/null 2>&1;
	echo "exit $?"; cat victim; ls tf2; grep -c "^k8shazgpu" tf2/k.prom' <<'X'
exit 0
keep
k.prom
14
X
done_testing
