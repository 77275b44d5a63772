#!/bin/sh
# gpu-probe: captured nvidia-smi output replayed into exact gpu records,
# and compute processes into process records with their owners; live
# runs against a fake nvidia-smi that logs its calls (one --query-gpu per
# probe, -L only with MIG, --query-compute-apps only with -p), its time
# limit and absence; simulated topologies; health thresholds and
# recovery; options.
. "$(dirname "$0")/lib.sh"

cp -R "$FIXTURES"/gpu-probe/* . || exit 1

# A fake nvidia-smi: logs its arguments, prints $FAKE_CSV for --query-gpu,
# $FAKE_LIST for -L, $FAKE_XML for -q -x (default: a document that
# knows no GPU, so no facts, as replay without -x has none) and
# $FAKE_APPS for --query-compute-apps, exits $FAKE_EXIT ($FAKE_APPS_EXIT
# for the processes, when set).
cat >fake-smi <<'EOF'
#!/bin/sh
echo "$*" >>"$FAKE_LOG"
case $1 in
--query-gpu=*) cat "$FAKE_CSV" ;;
-L) cat "$FAKE_LIST" ;;
-q) cat "${FAKE_XML:-none.xml}" ;;
--query-compute-apps=*) cat "$FAKE_APPS"; exit "${FAKE_APPS_EXIT:-${FAKE_EXIT:-0}}" ;;
esac
exit "${FAKE_EXIT:-0}"
EOF
printf '#!/bin/sh\nsleep 30 &\nwait\n' >slow-smi
printf '#!/bin/sh\nkill -9 $$\n' >dying-smi
chmod +x fake-smi slow-smi dying-smi
FAKE_LOG=$SCRATCH/smi.log
export FAKE_LOG
# Live runs read the kernel's files under an empty tree, not this host's.
mkdir -p noroot
ROOTS='-R noroot -Y noroot'
printf '<?xml version="1.0" ?>\n<nvidia_smi_log>\n</nvidia_smi_log>\n' >none.xml

QUERY='--query-gpu=index,uuid,name,pci.bus_id,memory.total,memory.used,utilization.gpu,temperature.gpu,power.draw,power.limit,ecc.errors.uncorrected.volatile.total,driver_version,mig.mode.current,compute_cap --format=csv,noheader,nounits'
APPS='--query-compute-apps=pid,process_name,gpu_uuid,used_memory --format=csv,noheader'

# ---- replay ----

check_output 'replay: 8 whole H100s' 'probe -r h100x8.csv' <<'EOF'
{"kind":"gpu","node":"node1","index":0,"minor":null,"uuid":"GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1100","name":"NVIDIA H100 80GB HBM3","product":"NVIDIA-H100-80GB-HBM3","brand":null,"memory_mib":81559,"memory_used_mib":1,"util_pct":0,"temp_c":31,"power_w":70,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:18:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":false,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":1,"minor":null,"uuid":"GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1101","name":"NVIDIA H100 80GB HBM3","product":"NVIDIA-H100-80GB-HBM3","brand":null,"memory_mib":81559,"memory_used_mib":78112,"util_pct":97,"temp_c":63,"power_w":612,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:2A:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":false,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":2,"minor":null,"uuid":"GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1102","name":"NVIDIA H100 80GB HBM3","product":"NVIDIA-H100-80GB-HBM3","brand":null,"memory_mib":81559,"memory_used_mib":1,"util_pct":0,"temp_c":30,"power_w":70,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:3A:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":false,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":3,"minor":null,"uuid":"GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1103","name":"NVIDIA H100 80GB HBM3","product":"NVIDIA-H100-80GB-HBM3","brand":null,"memory_mib":81559,"memory_used_mib":40211,"util_pct":45,"temp_c":52,"power_w":389,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:5D:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":false,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":4,"minor":null,"uuid":"GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1104","name":"NVIDIA H100 80GB HBM3","product":"NVIDIA-H100-80GB-HBM3","brand":null,"memory_mib":81559,"memory_used_mib":1,"util_pct":0,"temp_c":29,"power_w":69,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:9A:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":false,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":5,"minor":null,"uuid":"GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1105","name":"NVIDIA H100 80GB HBM3","product":"NVIDIA-H100-80GB-HBM3","brand":null,"memory_mib":81559,"memory_used_mib":1,"util_pct":0,"temp_c":32,"power_w":71,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:AB:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":false,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":6,"minor":null,"uuid":"GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1106","name":"NVIDIA H100 80GB HBM3","product":"NVIDIA-H100-80GB-HBM3","brand":null,"memory_mib":81559,"memory_used_mib":1,"util_pct":0,"temp_c":31,"power_w":70,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:BA:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":false,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":7,"minor":null,"uuid":"GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1107","name":"NVIDIA H100 80GB HBM3","product":"NVIDIA-H100-80GB-HBM3","brand":null,"memory_mib":81559,"memory_used_mib":1,"util_pct":0,"temp_c":30,"power_w":70,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:DB:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":false,"mig":null,"health":"ok","health_reasons":[]}
exit 0
EOF

check_output 'replay: 4 H200s in MIG, 3 x 2g.20gb + 1g.10gb each; [N/A] utilization warned once per line' \
	'probe -r h200-mig.csv -m h200-mig.list' <<'EOF'
{"kind":"gpu","node":"node1","index":0,"minor":null,"uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2000","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":71680,"memory_used_mib":88,"util_pct":null,"temp_c":34,"power_w":118,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:19:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":0,"minor":null,"uuid":"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d000","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":34,"power_w":118,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:19:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2000","device":0,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":0,"minor":null,"uuid":"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d011","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":34,"power_w":118,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:19:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2000","device":1,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":0,"minor":null,"uuid":"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d022","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":34,"power_w":118,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:19:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2000","device":2,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":0,"minor":null,"uuid":"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d033","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":10240,"memory_used_mib":null,"util_pct":null,"temp_c":34,"power_w":118,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:19:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"1g.10gb","parent_uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2000","device":3,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":1,"minor":null,"uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2001","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":71680,"memory_used_mib":88,"util_pct":null,"temp_c":35,"power_w":121,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:3B:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":1,"minor":null,"uuid":"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d100","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":35,"power_w":121,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:3B:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2001","device":0,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":1,"minor":null,"uuid":"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d111","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":35,"power_w":121,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:3B:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2001","device":1,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":1,"minor":null,"uuid":"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d122","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":35,"power_w":121,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:3B:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2001","device":2,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":1,"minor":null,"uuid":"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d133","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":10240,"memory_used_mib":null,"util_pct":null,"temp_c":35,"power_w":121,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:3B:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"1g.10gb","parent_uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2001","device":3,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":2,"minor":null,"uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2002","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":71680,"memory_used_mib":88,"util_pct":null,"temp_c":33,"power_w":118,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:4C:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":2,"minor":null,"uuid":"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d200","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":33,"power_w":118,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:4C:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2002","device":0,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":2,"minor":null,"uuid":"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d211","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":33,"power_w":118,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:4C:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2002","device":1,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":2,"minor":null,"uuid":"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d222","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":33,"power_w":118,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:4C:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2002","device":2,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":2,"minor":null,"uuid":"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d233","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":10240,"memory_used_mib":null,"util_pct":null,"temp_c":33,"power_w":118,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:4C:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"1g.10gb","parent_uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2002","device":3,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":3,"minor":null,"uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2003","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":71680,"memory_used_mib":88,"util_pct":null,"temp_c":34,"power_w":119,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:5D:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":3,"minor":null,"uuid":"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d300","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":34,"power_w":119,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:5D:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2003","device":0,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":3,"minor":null,"uuid":"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d311","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":34,"power_w":119,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:5D:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2003","device":1,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":3,"minor":null,"uuid":"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d322","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":34,"power_w":119,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:5D:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2003","device":2,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":3,"minor":null,"uuid":"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d333","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":10240,"memory_used_mib":null,"util_pct":null,"temp_c":34,"power_w":119,"power_limit_w":700,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":null,"compute_cap":"9.0","pci_bus_id":"00000000:5D:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"1g.10gb","parent_uuid":"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2003","device":3,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
exit 0
gpu-probe: h200-mig.csv:1: utilization.gpu: "[N/A]" read as null
gpu-probe: h200-mig.csv:2: utilization.gpu: "[N/A]" read as null
gpu-probe: h200-mig.csv:3: utilization.gpu: "[N/A]" read as null
gpu-probe: h200-mig.csv:4: utilization.gpu: "[N/A]" read as null
EOF

check_output 'replay: A100 with a compute-instance split, old-style MIG UUIDs give gi/ci' \
	'probe -r a100-mig.csv -m a100-mig.list' <<'EOF'
{"kind":"gpu","node":"node1","index":0,"minor":null,"uuid":"GPU-1e7d4c2b-9a60-3f85-b1d4-2e8c7f5a3000","name":"NVIDIA A100-SXM4-80GB","product":"NVIDIA-A100-SXM4-80GB","brand":null,"memory_mib":81920,"memory_used_mib":13,"util_pct":null,"temp_c":36,"power_w":62,"power_limit_w":400,"ecc_errors":0,"driver_version":"460.73.01","cuda_version":null,"compute_cap":"8.0","pci_bus_id":"00000000:07:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":0,"minor":null,"uuid":"MIG-GPU-1e7d4c2b-9a60-3f85-b1d4-2e8c7f5a3000/1/0","name":"NVIDIA A100-SXM4-80GB","product":"NVIDIA-A100-SXM4-80GB","brand":null,"memory_mib":40960,"memory_used_mib":null,"util_pct":null,"temp_c":36,"power_w":62,"power_limit_w":400,"ecc_errors":0,"driver_version":"460.73.01","cuda_version":null,"compute_cap":"8.0","pci_bus_id":"00000000:07:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"3g.40gb","parent_uuid":"GPU-1e7d4c2b-9a60-3f85-b1d4-2e8c7f5a3000","device":0,"gi":1,"ci":0},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":0,"minor":null,"uuid":"MIG-GPU-1e7d4c2b-9a60-3f85-b1d4-2e8c7f5a3000/2/0","name":"NVIDIA A100-SXM4-80GB","product":"NVIDIA-A100-SXM4-80GB","brand":null,"memory_mib":40960,"memory_used_mib":null,"util_pct":null,"temp_c":36,"power_w":62,"power_limit_w":400,"ecc_errors":0,"driver_version":"460.73.01","cuda_version":null,"compute_cap":"8.0","pci_bus_id":"00000000:07:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"1c.3g.40gb","parent_uuid":"GPU-1e7d4c2b-9a60-3f85-b1d4-2e8c7f5a3000","device":1,"gi":2,"ci":0},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":0,"minor":null,"uuid":"MIG-GPU-1e7d4c2b-9a60-3f85-b1d4-2e8c7f5a3000/2/1","name":"NVIDIA A100-SXM4-80GB","product":"NVIDIA-A100-SXM4-80GB","brand":null,"memory_mib":40960,"memory_used_mib":null,"util_pct":null,"temp_c":36,"power_w":62,"power_limit_w":400,"ecc_errors":0,"driver_version":"460.73.01","cuda_version":null,"compute_cap":"8.0","pci_bus_id":"00000000:07:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2c.3g.40gb","parent_uuid":"GPU-1e7d4c2b-9a60-3f85-b1d4-2e8c7f5a3000","device":2,"gi":2,"ci":1},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":1,"minor":null,"uuid":"GPU-1e7d4c2b-9a60-3f85-b1d4-2e8c7f5a3001","name":"NVIDIA A100-SXM4-80GB","product":"NVIDIA-A100-SXM4-80GB","brand":null,"memory_mib":81920,"memory_used_mib":4,"util_pct":0,"temp_c":33,"power_w":58,"power_limit_w":400,"ecc_errors":0,"driver_version":"460.73.01","cuda_version":null,"compute_cap":"8.0","pci_bus_id":"00000000:0F:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":false,"mig":null,"health":"ok","health_reasons":[]}
exit 0
gpu-probe: a100-mig.csv:1: utilization.gpu: "[N/A]" read as null
EOF

check_output 'replay: ERR! and error brackets make a GPU unhealthy; [N/A], padding and spaces are tolerated' \
	'probe -r error.csv' <<'EOF'
{"kind":"gpu","node":"node1","index":0,"minor":null,"uuid":"GPU-3f9a2d61-c4e8-4b07-8a15-9d6e0c2b4000","name":"NVIDIA A100-SXM4-40GB","product":"NVIDIA-A100-SXM4-40GB","brand":null,"memory_mib":40960,"memory_used_mib":3,"util_pct":0,"temp_c":35,"power_w":55,"power_limit_w":400,"ecc_errors":0,"driver_version":"535.104.05","cuda_version":null,"compute_cap":"8.0","pci_bus_id":"00000000:07:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":false,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":1,"minor":null,"uuid":"GPU-3f9a2d61-c4e8-4b07-8a15-9d6e0c2b4001","name":"NVIDIA A100-SXM4-40GB","product":"NVIDIA-A100-SXM4-40GB","brand":null,"memory_mib":40960,"memory_used_mib":null,"util_pct":null,"temp_c":null,"power_w":null,"power_limit_w":400,"ecc_errors":0,"driver_version":"535.104.05","cuda_version":null,"compute_cap":"8.0","pci_bus_id":"00000000:0F:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":false,"mig":null,"health":"unhealthy","health_reasons":["nvidia-smi reports memory.used as ERR!","nvidia-smi reports utilization.gpu as ERR!","nvidia-smi reports temperature.gpu as ERR!","nvidia-smi reports power.draw as [Unknown Error]"]}
{"kind":"gpu","node":"node1","index":2,"minor":null,"uuid":"GPU-3f9a2d61-c4e8-4b07-8a15-9d6e0c2b4002","name":"NVIDIA GeForce RTX 3090","product":"NVIDIA-GeForce-RTX-3090","brand":null,"memory_mib":24576,"memory_used_mib":512,"util_pct":12,"temp_c":48,"power_w":104,"power_limit_w":null,"ecc_errors":null,"driver_version":"535.104.05","cuda_version":null,"compute_cap":"8.6","pci_bus_id":"00000000:41:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":false,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":3,"minor":null,"uuid":"GPU-3f9a2d61-c4e8-4b07-8a15-9d6e0c2b4003","name":"NVIDIA A100-SXM4-40GB","product":"NVIDIA-A100-SXM4-40GB","brand":null,"memory_mib":40960,"memory_used_mib":0,"util_pct":0,"temp_c":38,"power_w":57,"power_limit_w":400,"ecc_errors":null,"driver_version":"535.104.05","cuda_version":null,"compute_cap":"8.0","pci_bus_id":"00000000:81:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":false,"mig":null,"health":"unhealthy","health_reasons":["nvidia-smi reports ecc.errors.uncorrected.volatile.total as [GPU requires reset]"]}
exit 0
gpu-probe: error.csv:2: memory.used: "ERR!": GPU error state, read as null
gpu-probe: error.csv:2: utilization.gpu: "ERR!": GPU error state, read as null
gpu-probe: error.csv:2: temperature.gpu: "ERR!": GPU error state, read as null
gpu-probe: error.csv:2: power.draw: "[Unknown Error]": GPU error state, read as null
gpu-probe: error.csv:3: power.limit: "[N/A]" read as null
gpu-probe: error.csv:3: ecc.errors.uncorrected.volatile.total: "[Not Supported]" read as null
gpu-probe: error.csv:4: ecc.errors.uncorrected.volatile.total: "[GPU requires reset]": GPU error state, read as null
EOF

check_output 'replay: an older driver without the last columns' \
	'probe -r old-driver.csv' <<'EOF'
{"kind":"gpu","node":"node1","index":0,"minor":null,"uuid":"GPU-9b2e7f40-6d13-4c58-a2f9-8e1d3c6b5000","name":"Tesla V100-SXM2-32GB","product":"Tesla-V100-SXM2-32GB","brand":null,"memory_mib":32510,"memory_used_mib":0,"util_pct":0,"temp_c":37,"power_w":43,"power_limit_w":300,"ecc_errors":0,"driver_version":"418.87.01","cuda_version":null,"compute_cap":null,"pci_bus_id":"00000000:15:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":false,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"node1","index":1,"minor":null,"uuid":"GPU-9b2e7f40-6d13-4c58-a2f9-8e1d3c6b5001","name":"Tesla V100-SXM2-32GB","product":"Tesla-V100-SXM2-32GB","brand":null,"memory_mib":32510,"memory_used_mib":16384,"util_pct":88,"temp_c":66,"power_w":251,"power_limit_w":300,"ecc_errors":0,"driver_version":"418.87.01","cuda_version":null,"compute_cap":null,"pci_bus_id":"00000000:16:00.0","pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":false,"mig":null,"health":"ok","health_reasons":[]}
exit 0
gpu-probe: old-driver.csv:1: no mig.mode.current .. compute_cap columns (older driver?), read as null
gpu-probe: old-driver.csv:2: no mig.mode.current .. compute_cap columns (older driver?), read as null
EOF

check_output 'replay: CRLF line ends' 'pj "[.index, .uuid, .temp_c, .health]" -r crlf.csv' <<'EOF'
[0,"GPU-3f9a2d61-c4e8-4b07-8a15-9d6e0c2b4000",35,"ok"]
exit 0
EOF

check_output 'replay: garbage lines are named and skipped, the good ones kept, exit 1' \
	'probe -r garbage.csv | sed "s/,\"name\".*//"' <<'EOF'
{"kind":"gpu","node":"node1","index":0,"minor":null,"uuid":"GPU-5c8d1e39-2f74-4a06-b9e3-7a1f4d8c6000"
exit 1
gpu-probe: garbage.csv:2: memory.total: "81559 MiB" is not a valid value
gpu-probe: garbage.csv:3: 1 field, expected 14: "Failed to initialize NVML: Driver/library versio..."
gpu-probe: garbage.csv:4: more than 14 fields, expected 14: "3, GPU-5c8d1e39-2f74-4a06-b9e3-7a1f4d8c6003, NVI..."
gpu-probe: garbage.csv:5: memory.used: "-5" is not a valid value
gpu-probe: garbage.csv:6: GPU GPU-5c8d1e39-2f74-4a06-b9e3-7a1f4d8c6000 listed twice (first on line 1)
gpu-probe: garbage.csv:7: index: "[N/A]" is not a valid value
gpu-probe: garbage.csv:8: mig.mode.current: "Sideways" is not a valid value
EOF

check_output 'replay: a truncated last line gives no record, exit 1' \
	'probe -r truncated.csv | sed "s/,\"name\".*//"' <<'EOF'
{"kind":"gpu","node":"node1","index":0,"minor":null,"uuid":"GPU-5c8d1e39-2f74-4a06-b9e3-7a1f4d8c6000"
exit 1
gpu-probe: truncated.csv:2: truncated line (no newline at the end): "1, GPU-5c8d1e39-2f74-4a06-b9e3-7a1f4d8c6001, NVI..."
EOF

check_output 'replay: a MIG GPU missing from -L is unhealthy' \
	'pj "select(.index == 3) | [.uuid, .mig, .health, .health_reasons]" -q -r h200-mig.csv -m h200-mig-missing.list' <<'EOF'
["GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2003",null,"unhealthy",["MIG enabled but missing from nvidia-smi -L"]]
exit 0
EOF

check_output 'replay: bad -L lines are named, exit 1' \
	'pj "[.index, .mig.profile, .health]" -q -r h200-mig.csv -m garbage.list' <<'EOF'
[0,null,"ok"]
[0,"2g.20gb","ok"]
[1,null,"ok"]
[2,null,"unhealthy"]
[3,null,"unhealthy"]
exit 1
gpu-probe: garbage.list:1: MIG device before any GPU line
gpu-probe: garbage.list:4: not a GPU or MIG device line: "  MIG 9g.20gb     Device  1: (UUID: MIG-6b0e9f3a..."
gpu-probe: garbage.list:5: not a GPU or MIG device line: "  MIG 2g.20gb     Device  2 (UUID: MIG-6b0e9f3a-..."
gpu-probe: garbage.list:6: not a GPU or MIG device line: "No MIG devices found"
gpu-probe: garbage.list:7: GPU GPU-00000000-0000-0000-0000-000000000000 is not in the --query-gpu output
gpu-probe: garbage.list:10: not a GPU or MIG device line: "  MIG 1g.10gb     Device  0: (UUID: MIG-6b0e9f3a..."
gpu-probe: garbage.list:11: truncated line (no newline at the end): "  MIG 1g.10gb     Device  1: (UUID: MIG-6b0e9f3a"
EOF

check_output 'replay: MIG enabled without -m says so' \
	'pj "[.index, .mig_enabled, .mig]" -q -r a100-mig.csv' <<'EOF'
[0,true,null]
[1,false,null]
exit 0
gpu-probe: a100-mig.csv: MIG is enabled but no -m list was given: no MIG devices reported
EOF

check_output 'replay: "No devices were found" and empty output are no GPUs' \
	'echo "No devices were found" >none.csv && : >empty.csv && probe -r none.csv && probe -r empty.csv' <<'EOF'
exit 0
exit 0
EOF

check_output 'replay: -r - reads stdin' \
	'pj "[.index, .uuid]" -r - <crlf.csv' <<'EOF'
[0,"GPU-3f9a2d61-c4e8-4b07-8a15-9d6e0c2b4000"]
exit 0
EOF

check_output 'replay: a missing file' 'probe -r nosuch.csv' <<'EOF'
exit 1
gpu-probe: nosuch.csv: No such file or directory
EOF

# Every line must be text a record can carry: a line with invalid UTF-8,
# a control character or a NUL byte is refused whole, named by number.
g=GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c20
tail=' 00000000:19:00.0, 71680, 88, 0, 34, 118.20, 700.00, 0, 550.90.07, Disabled, 9.0'
{
	printf '0, %s00, NVIDIA H200,%s\n' $g "$tail"
	printf '1, %s01, NVIDIA \377H200,%s\n' $g "$tail"
	printf '2, %s02, NVIDIA \033[31mH200,%s\n' $g "$tail"
	printf '3, %s03, NVIDIA H200,%s\000junk\n' $g "$tail"
	printf '4, %s04, NVIDIA\tH200,%s\n' $g "$tail"
	printf '5, %s05, NVIDIA \302\205H200,%s\n' $g "$tail"
	printf '6, %s06, NVIDIA H200 \303\251,%s\n' $g "$tail"
	printf '0, %s07, NVIDIA H200,%s\n' $g "$tail"
} >text.csv
check_output 'replay: lines that are not text, and a repeated index, are refused by line' \
	'pj "[.index, .uuid, .name]" -r text.csv' <<'EOF'
[0,"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2000","NVIDIA H200"]
[6,"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2006","NVIDIA H200 é"]
exit 1
gpu-probe: text.csv:2: line is not valid UTF-8: "1, GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2001, NVI..."
gpu-probe: text.csv:3: line holds a control character: "2, GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2002, NVI..."
gpu-probe: text.csv:4: line holds a NUL byte: "3, GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2003, NVI..."
gpu-probe: text.csv:5: name: "NVIDIA?H200" is not a valid value
gpu-probe: text.csv:6: line holds a control character: "5, GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2005, NVI..."
gpu-probe: text.csv:8: GPU index 0 listed twice (first on line 1)
EOF

# A MIG line whose UUID is not UTF-8 once gave a record carrying its
# GPU's UUID; the same MIG device number, or UUID, twice gave two records
# of one device.
m=MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d
{
	printf 'GPU 0: NVIDIA H200 (UUID: %s00)\n' $g
	printf '  MIG 2g.20gb     Device  0: (UUID: %s000)\n' $m
	printf '  MIG 2g.20gb     Device  1: (UUID: %s\377011)\n' $m
	printf '  MIG 2g.20gb     Device  0: (UUID: %s022)\n' $m
	printf '  MIG 1g.10gb     Device  3: (UUID: %s000)\n' $m
	printf '  MIG 1g.10gb     Device  4: (UUID: %s01)\n' $g
	printf '  MIG 1g.10gb     Device  5: (UUID: %s055)\n' $m
	printf 'GPU 1: NVIDIA H200 (UUID: %s01)\n' $g
	printf '  MIG 1g.10gb     Device  0: (UUID: %s055)\n' $m
	printf '  MIG 1g.10gb     Device  1: (UUID: %s\t111)\n' $m
	printf '  MIG 1g.10gb     Device  2: (UUID: %s122)\n' $m
	printf 'GPU 2: NVIDIA H200 \001(UUID: %s02)\n' $g
	printf '  MIG 1g.10gb     Device  0: (UUID: %s200)\n' $m
} >dup.list
check_output 'replay: -L lines that are not text, or repeat a device or UUID, are refused by line' \
	'pj "[.index, .uuid, .mig.device]" -q -r h200-mig.csv -m dup.list' <<'EOF'
[0,"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2000",null]
[0,"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d000",0]
[0,"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d055",5]
[1,"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2001",null]
[1,"MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d122",2]
[2,"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2002",null]
[3,"GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2003",null]
exit 1
gpu-probe: dup.list:3: line is not valid UTF-8: "  MIG 2g.20gb     Device  1: (UUID: MIG-6b0e9f3a..."
gpu-probe: dup.list:4: MIG device 0 of GPU GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2000 listed twice (first on line 2)
gpu-probe: dup.list:5: MIG device MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d000 listed twice (first on line 2)
gpu-probe: dup.list:6: MIG device GPU-c41f0d92-7e35-4b1a-8f62-3d9e5a7c2001 has the UUID of the GPU on line 2
gpu-probe: dup.list:9: MIG device MIG-6b0e9f3a-51c7-5d28-a4e1-07f2c9b8d055 listed twice (first on line 7)
gpu-probe: dup.list:10: not a GPU or MIG device line: "  MIG 1g.10gb     Device  1: (UUID: MIG-6b0e9f3a..."
gpu-probe: dup.list:12: line holds a control character: "GPU 2: NVIDIA H200 ?(UUID: GPU-c41f0d92-7e35-4b1..."
EOF

# Linear in the number of GPUs: 40,000 once took more than 30 s.
awk -v g=$g -v m=$m 'BEGIN { for (i = 0; i < 40000; i++) {
	printf "%d, %s%06d, NVIDIA H200, 00000000:19:00.0, 71680, 88, 5, 34, 118.20, 700.00, 0, 550.90.07, Enabled, 9.0\n", i, g, i >"many.csv"
	printf "GPU %d: NVIDIA H200 (UUID: %s%06d)\n  MIG 1g.10gb     Device  0: (UUID: %s%06d)\n", i, g, i, m, i >"many.list" } }'
slow=30
[ "${VALGRIND:-}" = 1 ] && slow=600
check_output 'replay: 40,000 GPUs and as many MIG devices, in linear time' \
	"timeout $slow gpu-probe -N n -r many.csv -m many.list | wc -l" <<'EOF'
80000
EOF

# A capture is bounded as nvidia-smi's output is: 16 MiB.
awk 'BEGIN { s = "x"; while (length(s) < 1048576) s = s s;
	for (i = 0; i < 16; i++) print s }' >huge.csv
mkdir -p adir
check_output 'replay: a capture past 16 MiB, or unreadable, is refused whole, exit 1' \
	'probe -r huge.csv; probe -r - <huge.csv; probe -r adir;
	pj "[.index, .mig]" -q -r h200-mig.csv -m huge.csv' <<'EOF'
exit 1
gpu-probe: huge.csv: more than 16777216 bytes: not a capture of nvidia-smi output
exit 1
gpu-probe: <stdin>: more than 16777216 bytes: not a capture of nvidia-smi output
exit 1
gpu-probe: adir: read error: Is a directory
[0,null]
[1,null]
[2,null]
[3,null]
exit 1
gpu-probe: huge.csv: more than 16777216 bytes: not a capture of nvidia-smi output
EOF

check_output 'a node name that is not text is a usage error' \
	'gpu-probe -N "$(printf "a\001b")" -r crlf.csv; echo "exit $?"; NODE_NAME="$(printf "n\377")" gpu-probe -r crlf.csv; echo "exit $?"' <<'EOF'
exit 2
exit 2
EOF

# ---- compute processes (-a, -p) ----

# The H200 of the facts with 6671 MiB in use by one process (pid 1 here):
# its owner is the one ps names, as canhazgpu has it.
owner1=$(ps -o user= -p 1)
check_output 'replay -a: a process record per compute process, its owner from /proc' \
	'probe -r h200-busy.csv -a h200-busy-apps.csv | sed -n 2p' <<EOF
{"kind":"process","node":"node1","index":0,"gpu_uuid":"GPU-ef3dd380-5942-addc-6b66-8cd55589cd49","pid":1,"process_name":"python3","used_memory_mib":6144,"user":"$owner1"}
EOF

# Names with commas (the first field is the pid, the last two the UUID and
# the memory), memory without a unit or unavailable, CRLF, this script's
# own pid, and one no process has.
printf '%s\r\n' "$$, /usr/bin/python3 -m vllm.entrypoints.openai.api_server --model a,b, GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1101, 70144 MiB" \
	"99999999, python3, GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1101, 7808" \
	"$$, , GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1103, [N/A]" >apps.csv
check_output 'replay -a: names with commas, [N/A] memory; a pid gone is "unknown", said, exit 0' \
	'pj "select(.kind == \"process\") | [.index, .pid, .process_name, .used_memory_mib, .user]" -r h100x8.csv -a apps.csv' <<EOF
[1,$$,"/usr/bin/python3 -m vllm.entrypoints.openai.api_server --model a,b",70144,"$(id -un)"]
[1,99999999,"python3",7808,"unknown"]
[3,$$,null,null,"$(id -un)"]
exit 0
gpu-probe: apps.csv:3: used_memory: "[N/A]" read as null
gpu-probe: apps.csv:2: pid 99999999: /proc/99999999/status: No such file or directory: user unknown
EOF

printf '%s\n' "No running processes found" >none-apps.csv
printf '%s\n' "1, python3, GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1101" "x1, python3, GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1101, 5 MiB" \
	"0, python3, GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1101, 5 MiB" "1, python3, GPU-00000000-0000-0000-0000-000000000000, 5 MiB" \
	"1, python3, GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1101, 5 GiB" "1, python3, GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1107, 5 MiB" >bad-apps.csv
printf '%s' "1, python3, GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f1101, 5 M" >>bad-apps.csv
check_output 'replay -a: none running; bad lines named and skipped, the good kept, exit 1' \
	'pj "select(.kind == \"process\") | [.index, .pid]" -r h100x8.csv -a none-apps.csv; pj "select(.kind == \"process\") | [.index, .pid]" -q -r h100x8.csv -a bad-apps.csv' <<EOF
exit 0
[7,1]
exit 1
gpu-probe: bad-apps.csv:1: 3 fields, expected 4 (pid, process_name, gpu_uuid, used_memory): "1, python3, GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f..."
gpu-probe: bad-apps.csv:2: pid: "x1" is not a valid value
gpu-probe: bad-apps.csv:3: pid: "0" is not a valid value
gpu-probe: bad-apps.csv:4: GPU GPU-00000000-0000-0000-0000-000000000000 is not in the --query-gpu output
gpu-probe: bad-apps.csv:5: used_memory: "5 GiB" is not a valid value
gpu-probe: bad-apps.csv:7: truncated line (no newline at the end): "1, python3, GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f..."
EOF

check_output 'live -p: the query, then one --query-compute-apps; the records replay gives' \
	'rm -f smi.log && FAKE_CSV=h100x8.csv FAKE_APPS=apps.csv gpu-probe -N node1 -p -s ./fake-smi $ROOTS >live.out 2>/dev/null && gpu-probe -N node1 -r h100x8.csv -a apps.csv >replay.out 2>/dev/null; cmp live.out replay.out && grep -c process live.out && cat smi.log' <<EOF
3
$QUERY
$APPS
-q -x
EOF

check_output 'live -p with MIG: the query, -L, then the processes' \
	'rm -f smi.log && FAKE_CSV=h200-mig.csv FAKE_LIST=h200-mig.list FAKE_APPS=none-apps.csv gpu-probe -q -N node1 -p -s ./fake-smi $ROOTS >live.out && wc -l <live.out && cat smi.log' <<EOF
20
$QUERY
-L
$APPS
-q -x
EOF

check_output 'live -p: process messages name the call; -P writes no sample of a process record' \
	'FAKE_CSV=h100x8.csv FAKE_APPS=bad-apps.csv gpu-probe -N node1 -q -p -s ./fake-smi $ROOTS >/dev/null 2>err; echo "exit $?"; head -n 2 err;
	FAKE_CSV=h100x8.csv FAKE_APPS=apps.csv gpu-probe -N node1 -q -p -s ./fake-smi $ROOTS -P with.prom >/dev/null 2>&1;
	gpu-probe -N node1 -r h100x8.csv -P without.prom >/dev/null && cmp with.prom without.prom && echo same metrics' <<'EOF'
exit 1
gpu-probe: nvidia-smi --query-compute-apps:1: 3 fields, expected 4 (pid, process_name, gpu_uuid, used_memory): "1, python3, GPU-8a3c5e71-24b9-4f06-9d1e-6c7b2a0f..."
gpu-probe: nvidia-smi --query-compute-apps:2: pid: "x1" is not a valid value
same metrics
EOF

check_output 'live -p: a failing process query with no output is none, with output a failure' \
	'FAKE_CSV=h100x8.csv FAKE_APPS=/dev/null FAKE_APPS_EXIT=6 pj "select(.kind == \"process\")" -q -p -s ./fake-smi $ROOTS;
	FAKE_CSV=h100x8.csv FAKE_APPS=h200-busy-apps.csv FAKE_APPS_EXIT=6 pj "select(.kind == \"process\")" -q -p -s ./fake-smi $ROOTS' <<'EOF'
exit 0
exit 1
gpu-probe: ./fake-smi: exited with status 6
gpu-probe: nvidia-smi --query-compute-apps:1: GPU GPU-ef3dd380-5942-addc-6b66-8cd55589cd49 is not in the --query-gpu output
EOF

check_output 'usage: -p only live, -a only with -r' \
	'for a in "-p -r h100x8.csv" "-a apps.csv" "-p -t seed-mig.yaml"; do gpu-probe $a >/dev/null 2>&1; echo "exit $?"; done' <<'EOF'
exit 2
exit 2
exit 2
EOF

# ---- live ----

check_output 'live: one --query-gpu call and no -L without MIG; one -q -x for the facts' \
	'rm -f smi.log && FAKE_CSV=h100x8.csv gpu-probe -N node1 -s ./fake-smi $ROOTS >live.out && gpu-probe -N node1 -r h100x8.csv >replay.out && cmp live.out replay.out && cat smi.log' <<EOF
$QUERY
-q -x
EOF

check_output 'live: with MIG, the query then one -L, then -q -x' \
	'rm -f smi.log && FAKE_CSV=h200-mig.csv FAKE_LIST=h200-mig.list gpu-probe -q -N node1 -s ./fake-smi $ROOTS >live.out && gpu-probe -q -N node1 -r h200-mig.csv -m h200-mig.list >replay.out && cmp live.out replay.out && wc -l <live.out && cat smi.log' <<EOF
20
$QUERY
-L
-q -x
EOF

check_output 'live: warnings name the nvidia-smi output and line' \
	'export FAKE_CSV=error.csv && pj "[.index, .health]" -s ./fake-smi $ROOTS' <<'EOF'
[0,"ok"]
[1,"unhealthy"]
[2,"ok"]
[3,"unhealthy"]
exit 0
gpu-probe: nvidia-smi:2: memory.used: "ERR!": GPU error state, read as null
gpu-probe: nvidia-smi:2: utilization.gpu: "ERR!": GPU error state, read as null
gpu-probe: nvidia-smi:2: temperature.gpu: "ERR!": GPU error state, read as null
gpu-probe: nvidia-smi:2: power.draw: "[Unknown Error]": GPU error state, read as null
gpu-probe: nvidia-smi:3: power.limit: "[N/A]" read as null
gpu-probe: nvidia-smi:3: ecc.errors.uncorrected.volatile.total: "[Not Supported]" read as null
gpu-probe: nvidia-smi:4: ecc.errors.uncorrected.volatile.total: "[GPU requires reset]": GPU error state, read as null
gpu-probe: noroot/class/dmi/id/product_name: No such file or directory: machine null
gpu-probe: nvidia-smi -q -x: GPU GPU-3f9a2d61-c4e8-4b07-8a15-9d6e0c2b4000 is not in it: its facts are null
gpu-probe: noroot/driver/nvidia/gpus: No such file or directory: minor numbers null
gpu-probe: noroot/bus/pci/devices/0000:07:00.0/numa_node: No such file or directory: numa_node null
gpu-probe: noroot/bus/pci/devices/0000:07:00.0: No such file or directory: pcie_root null
gpu-probe: noroot/bus/pci/devices/0000:07:00.0/class: No such file or directory: pci_class null
EOF

check_output 'live: $NVIDIA_SMI, then nvidia-smi on PATH' \
	'mkdir -p bin && cp fake-smi bin/nvidia-smi && rm -f smi.log && export FAKE_CSV=crlf.csv && (export NVIDIA_SMI=./fake-smi && pj .uuid -q $ROOTS) && (PATH=$SCRATCH/bin:$PATH && pj .uuid -q $ROOTS) && wc -l <smi.log' <<'EOF'
"GPU-3f9a2d61-c4e8-4b07-8a15-9d6e0c2b4000"
exit 0
"GPU-3f9a2d61-c4e8-4b07-8a15-9d6e0c2b4000"
exit 0
4
EOF

check_output 'live: a hanging nvidia-smi is killed at the time limit, exit 75' \
	'start=$(date +%s); probe -T 1 -s ./slow-smi; end=$(date +%s); test $((end - start)) -le 5 && echo quick' <<'EOF'
exit 75
gpu-probe: ./slow-smi: timed out after 1s
quick
EOF

check_output 'live: an nvidia-smi killed by a signal, exit 75' 'probe -s ./dying-smi' <<'EOF'
exit 75
gpu-probe: ./dying-smi: killed by signal 9
EOF

check_output 'live: a missing nvidia-smi, exit 1' \
	'probe -s ./nosuch-smi; NVIDIA_SMI=nosuch-nvidia-smi probe' <<'EOF'
exit 1
gpu-probe: ./nosuch-smi: not found
exit 1
gpu-probe: nosuch-nvidia-smi: not found
EOF

check_output 'live: nvidia-smi failing with a message, exit 1 and no records' \
	'printf "NVIDIA-SMI has failed because it couldn'"'"'t communicate with the NVIDIA driver.\n" >failed.txt && export FAKE_CSV=failed.txt FAKE_EXIT=9 && probe -s ./fake-smi $ROOTS' <<'EOF'
exit 1
gpu-probe: ./fake-smi: exited with status 9
gpu-probe: nvidia-smi:1: 1 field, expected 14: "NVIDIA-SMI has failed because it couldn't commun..."
EOF

# ---- topology ----

cp "$TOP/manifests/sim/seed-mig.yaml" seed-mig.yaml || exit 1
SEED=seed-mig.yaml

check_output 'topology: medium, 4 H200s with 12 x 2g.20gb + 4 x 1g.10gb' \
	"gpu-probe -t '$SEED' -n medium" <<'EOF'
{"kind":"gpu","node":"medium","index":0,"minor":0,"uuid":"GPU-a050d32f-c6aa-6eb3-2ce5-bbec7d5dd216","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":71680,"memory_used_mib":0,"util_pct":0,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":0,"minor":0,"uuid":"MIG-6ce00e97-385a-7979-a842-f51f1eca28b1","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-a050d32f-c6aa-6eb3-2ce5-bbec7d5dd216","device":0,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":0,"minor":0,"uuid":"MIG-c5e43e2a-c454-86cd-d0b3-18384ed98fb7","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-a050d32f-c6aa-6eb3-2ce5-bbec7d5dd216","device":1,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":0,"minor":0,"uuid":"MIG-96e476d7-a5f0-bd9c-1a58-9ddbdf7e2569","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-a050d32f-c6aa-6eb3-2ce5-bbec7d5dd216","device":2,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":0,"minor":0,"uuid":"MIG-48985034-d3e7-f2a2-915b-898fbc4f032c","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":10240,"memory_used_mib":null,"util_pct":null,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"1g.10gb","parent_uuid":"GPU-a050d32f-c6aa-6eb3-2ce5-bbec7d5dd216","device":3,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":1,"minor":1,"uuid":"GPU-04418536-0200-9d4d-cf1b-ad75774d3eb5","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":71680,"memory_used_mib":0,"util_pct":0,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":1,"minor":1,"uuid":"MIG-3929967f-27a6-a0a7-141b-e151a6e7ee8c","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-04418536-0200-9d4d-cf1b-ad75774d3eb5","device":0,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":1,"minor":1,"uuid":"MIG-0311feed-1c9a-ee88-0e16-7c73040dbee7","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-04418536-0200-9d4d-cf1b-ad75774d3eb5","device":1,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":1,"minor":1,"uuid":"MIG-3e15d07f-2473-a611-486b-d356a217428a","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-04418536-0200-9d4d-cf1b-ad75774d3eb5","device":2,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":1,"minor":1,"uuid":"MIG-8fca35fc-ffe6-ad61-bdfe-094575e23676","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":10240,"memory_used_mib":null,"util_pct":null,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"1g.10gb","parent_uuid":"GPU-04418536-0200-9d4d-cf1b-ad75774d3eb5","device":3,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":2,"minor":2,"uuid":"GPU-a6d61417-1a8d-a4d4-c76a-8b59b4ad975a","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":71680,"memory_used_mib":0,"util_pct":0,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":2,"minor":2,"uuid":"MIG-9256cc3a-6225-3cfe-fafb-438275aef934","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-a6d61417-1a8d-a4d4-c76a-8b59b4ad975a","device":0,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":2,"minor":2,"uuid":"MIG-f8d61dd9-8e83-1bcb-405b-5038ae4d7f39","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-a6d61417-1a8d-a4d4-c76a-8b59b4ad975a","device":1,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":2,"minor":2,"uuid":"MIG-972319e0-16ec-4e48-fff4-e8562750848c","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-a6d61417-1a8d-a4d4-c76a-8b59b4ad975a","device":2,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":2,"minor":2,"uuid":"MIG-b71e746d-a83d-d8bf-e9b5-db7ccd78b6a3","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":10240,"memory_used_mib":null,"util_pct":null,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"1g.10gb","parent_uuid":"GPU-a6d61417-1a8d-a4d4-c76a-8b59b4ad975a","device":3,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":3,"minor":3,"uuid":"GPU-c6d6e364-fa61-6f0b-4d16-559e9b74902d","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":71680,"memory_used_mib":0,"util_pct":0,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":null,"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":3,"minor":3,"uuid":"MIG-a7bef573-984f-4068-eb61-28491b7dad34","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-c6d6e364-fa61-6f0b-4d16-559e9b74902d","device":0,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":3,"minor":3,"uuid":"MIG-46f28d49-b0f4-70e8-8e9a-de87697f6902","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-c6d6e364-fa61-6f0b-4d16-559e9b74902d","device":1,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":3,"minor":3,"uuid":"MIG-41a7afea-e9fd-196b-dcbf-543648f2b454","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":20480,"memory_used_mib":null,"util_pct":null,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"2g.20gb","parent_uuid":"GPU-c6d6e364-fa61-6f0b-4d16-559e9b74902d","device":2,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
{"kind":"gpu","node":"medium","index":3,"minor":3,"uuid":"MIG-cf4a52d1-15a8-2d5e-5e49-b9d3837bb427","name":"NVIDIA H200","product":"NVIDIA-H200","brand":null,"memory_mib":10240,"memory_used_mib":null,"util_pct":null,"temp_c":30,"power_w":null,"power_limit_w":null,"ecc_errors":0,"driver_version":"550.90.07","cuda_version":"12.4","compute_cap":"9.0","pci_bus_id":null,"pcie_root":null,"numa_node":null,"pci_class":null,"addressing_mode":null,"machine":null,"mig_enabled":true,"mig":{"profile":"1g.10gb","parent_uuid":"GPU-c6d6e364-fa61-6f0b-4d16-559e9b74902d","device":3,"gi":null,"ci":null},"health":"ok","health_reasons":[]}
EOF

check_output 'topology: small, 28 x 1g.10gb on 4 GPUs, UUIDs unique' \
	"gpu-probe -t '$SEED' -n small >small.out && jq -r '[.index, (.mig.profile // \"whole\")] | @tsv' small.out | sort | uniq -c && jq -r .uuid small.out | sort -u | wc -l" <<'EOF'
      7 0	1g.10gb
      1 0	whole
      7 1	1g.10gb
      1 1	whole
      7 2	1g.10gb
      1 2	whole
      7 3	1g.10gb
      1 3	whole
32
EOF

check 'topology: the same records every time' \
	"gpu-probe -t '$SEED' >a.out && gpu-probe -t '$SEED' >b.out && cmp a.out b.out && test \$(wc -l <a.out) -eq 52"

check_output 'topology: every node without -n; count names h100-0..3' \
	"gpu-probe -t '$TOP/manifests/sim/h100x8.yaml' >h100.out && jq -r '[.node, .product, .memory_mib, .mig_enabled] | @tsv' h100.out | uniq -c" <<'EOF'
      8 h100-0	NVIDIA-H100-80GB-HBM3	81559	false
      8 h100-1	NVIDIA-H100-80GB-HBM3	81559	false
      8 h100-2	NVIDIA-H100-80GB-HBM3	81559	false
      8 h100-3	NVIDIA-H100-80GB-HBM3	81559	false
EOF

cat >split.yaml <<'EOF'
defaults: {product: NVIDIA-A100-SXM4-80GB, memoryMiB: 81920, driverVersion: "535.104.05"}
nodes:
- name: a100
  gpus: 2
  mig: [3g.40gb, 1c.3g.40gb, 1c.3g.40gb, 1c.3g.40gb]
  migByGPU: {"1": []}
EOF
check_output 'topology: compute-instance splits share a GPU instance; migByGPU overrides' \
	'pj "[.node, .index, .name, .memory_mib, .mig_enabled, .mig.profile, .mig.device]" -t split.yaml' <<'EOF'
["a100",0,"NVIDIA A100 SXM4 80GB",81920,true,null,null]
["a100",0,"NVIDIA A100 SXM4 80GB",40960,true,"3g.40gb",0]
["a100",0,"NVIDIA A100 SXM4 80GB",40960,true,"1c.3g.40gb",1]
["a100",0,"NVIDIA A100 SXM4 80GB",40960,true,"1c.3g.40gb",2]
["a100",0,"NVIDIA A100 SXM4 80GB",40960,true,"1c.3g.40gb",3]
["a100",1,"NVIDIA A100 SXM4 80GB",81920,false,null,null]
exit 0
EOF

cat >bad.yaml <<'EOF'
defaults: {memoryMiB: 71680}
nodes:
- name: ok
  gpus: 1
  mig: [1g.10gb]
- name: x
  gpus: 2
  mig: [3g.40gb, 3g.40gb, 3g.40gb]
  migByGPU: {"1": [4g.40gb, 3g.20gb], "2": []}
- name: y
  gpus: 1
  mig: [2g.20gb, huge]
- name: z
  gpus: 1
  mig: [1c.3g.40gb, 1c.3g.40gb, 1c.3g.40gb, 1c.3g.40gb, 2g.20gb]
- name: Bad_Name
EOF
check_output 'topology: impossible layouts are refused before any record' 'probe -t bad.yaml' <<'EOF'
exit 1
gpu-probe: bad.yaml: node "x": migByGPU "2": no such GPU (the node has 2)
gpu-probe: bad.yaml: node "x" gpu 0: MIG slices 9 > 7
gpu-probe: bad.yaml: node "x" gpu 0: MIG memory 120gb > 70gb
gpu-probe: bad.yaml: node "y" gpu 0: unknown MIG profile "huge"
gpu-probe: bad.yaml: node "z" gpu 0: MIG slices 8 > 7
gpu-probe: bad.yaml: node "z" gpu 0: MIG memory 100gb > 70gb
gpu-probe: bad.yaml: node 4: name must be a lowercase DNS label
EOF

cat >dupgpu.yaml <<'EOF'
nodes:
- name: a
  gpus: 2
  mig: [1g.10gb]
  migByGPU: {"0": [7g.80gb], "00": [], "1": [3g.40gb]}
EOF
cat >huge.yaml <<'EOF'
nodes:
- name: a
  count: 9000
  gpus: 8
EOF
cat >many.yaml <<'EOF'
nodes:
- name: a
  count: 6000
- name: b
  count: 6000
EOF
cat >ctl.yaml <<'EOF'
nodes:
- name: a
  gpus: 1
  product: "NVIDIA\e[31mH200"
  driverVersion: "550\x85"
EOF
check_output 'topology: a GPU named twice in migByGPU; more than 10000 nodes or 65536 GPUs; control characters' \
	'for f in dupgpu huge many ctl; do probe -t $f.yaml; done' <<'EOF'
exit 1
gpu-probe: dupgpu.yaml: node "a": migByGPU "00": no such GPU (the node has 2)
exit 1
gpu-probe: huge.yaml: node "a": the topology would have more than 10000 nodes or 65536 GPUs
exit 1
gpu-probe: many.yaml: node "b": the topology would have more than 10000 nodes or 65536 GPUs
exit 1
gpu-probe: ctl.yaml: node "a": product holds a control character
gpu-probe: ctl.yaml: node "a": driverVersion holds a control character
EOF

check_output 'topology: YAML errors, a missing file, an unknown node' \
	'printf "nodes: [\n" >syntax.yaml; probe -t syntax.yaml; probe -t nosuch.yaml; probe -t "$SEED" -n nosuch' <<'EOF'
exit 1
gpu-probe: syntax.yaml:2:1: did not find expected node content (while parsing a flow node at 2:1)
exit 1
gpu-probe: nosuch.yaml: No such file or directory
exit 1
gpu-probe: seed-mig.yaml: no node "nosuch"
EOF

# ---- health ----

check_output 'health: temperature, power over the limit, ECC errors' \
	'pj "[.index, .health, .health_reasons]" -r hot.csv' <<'EOF'
[0,"unhealthy",["temperature 91C >= 90C"]]
[1,"warn",["temperature 86C >= 85C","power 735W is 105% of the 700W limit >= 100%"]]
[2,"unhealthy",["uncorrected ECC errors 2 > 0"]]
exit 0
EOF

check_output 'health: judged per probe, so a GPU recovers with its readings' \
	'for f in hot.csv h100x8.csv hot.csv; do pj "select(.index == 0) | [.temp_c, .health]" -r $f; done' <<'EOF'
[91,"unhealthy"]
exit 0
[31,"ok"]
exit 0
[91,"unhealthy"]
exit 0
EOF

check_output 'health: -H moves and turns off thresholds' \
	'pj "[.index, .health, .health_reasons]" -r hot.csv -H temp_unhealthy=95 -H power_warn_pct=off -H ecc_unhealthy=5' <<'EOF'
[0,"warn",["temperature 91C >= 85C"]]
[1,"warn",["temperature 86C >= 85C"]]
[2,"ok",[]]
exit 0
EOF

check_output 'health: memory and utilization thresholds' \
	'pj "select(.health != \"ok\") | [.index, .health, .health_reasons]" -r h100x8.csv -H mem_warn_pct=90 -H util_unhealthy_pct=95' <<'EOF'
[1,"unhealthy",["memory used 78112MiB is 95.77% of 81559MiB >= 90%","utilization 97% >= 95%"]]
exit 0
EOF

cat >limits.json <<'EOF'
{"temp_warn": 60, "temp_unhealthy": null, "ecc_unhealthy": "off"}
EOF
cat >limits.yaml <<'EOF'
# the same thresholds, in YAML
temp_warn: 60
temp_unhealthy: off
ecc_unhealthy: null
EOF
check_output 'health: -c reads JSON or YAML; -H wins over it' \
	'for c in limits.json limits.yaml; do pj "[.index, .health, .health_reasons]" -r hot.csv -c $c -H power_warn_pct=off; done' <<'EOF'
[0,"warn",["temperature 91C >= 60C"]]
[1,"warn",["temperature 86C >= 60C"]]
[2,"ok",[]]
exit 0
[0,"warn",["temperature 91C >= 60C"]]
[1,"warn",["temperature 86C >= 60C"]]
[2,"ok",[]]
exit 0
EOF

cat >badlimits.yaml <<'EOF'
temp_warm: 60
EOF
check_output 'health: a bad config exits 1, a bad -H exits 2' \
	'probe -r hot.csv -c badlimits.yaml; probe -r hot.csv -H temp_warn=hot; probe -r hot.csv -H temp_warn' <<'EOF'
exit 1
gpu-probe: badlimits.yaml: temp_warm: no such threshold
exit 2
gpu-probe: -H temp_warn=hot: not a number from 0 to 1e9, or "off"
exit 2
gpu-probe: -H temp_warn: expected name=value
EOF

# A NaN threshold passes no comparison: it silently turned a check off.
check_output 'health: nan, inf and other non-numbers are refused, exit 2 (-H) or 1 (-c)' \
	'for v in nan NaN inf -1 1e3 0x10 " 5" 1000000001; do gpu-probe -N n -r hot.csv -H "temp_warn=$v" 2>&1; echo "exit $?"; done;
	echo "temp_warn: .nan" >nan.yaml; echo "{\"temp_warn\": \"nan\"}" >nan.json;
	echo "temp_warn: 1e400" >huge.yaml;
	for c in nan.yaml nan.json huge.yaml; do probe -r hot.csv -c $c; done' <<'EOF'
gpu-probe: -H temp_warn=nan: not a number from 0 to 1e9, or "off"
exit 2
gpu-probe: -H temp_warn=NaN: not a number from 0 to 1e9, or "off"
exit 2
gpu-probe: -H temp_warn=inf: not a number from 0 to 1e9, or "off"
exit 2
gpu-probe: -H temp_warn=-1: not a number from 0 to 1e9, or "off"
exit 2
gpu-probe: -H temp_warn=1e3: not a number from 0 to 1e9, or "off"
exit 2
gpu-probe: -H temp_warn=0x10: not a number from 0 to 1e9, or "off"
exit 2
gpu-probe: -H temp_warn= 5: not a number from 0 to 1e9, or "off"
exit 2
gpu-probe: -H temp_warn=1000000001: not a number from 0 to 1e9, or "off"
exit 2
exit 1
gpu-probe: nan.yaml:1:12: cannot represent .nan in JSON
exit 1
gpu-probe: nan.json: temp_warn: not a number from 0 to 1e9, null or "off"
exit 1
gpu-probe: huge.yaml:1:12: real 1e400 out of range
EOF

check_output 'health: decimals with a fraction are thresholds' \
	'pj "[.index, .health_reasons]" -r hot.csv -H temp_warn=85.5 -H temp_unhealthy=91. -H power_warn_pct=off' <<'EOF'
[0,["temperature 91C >= 91C"]]
[1,["temperature 86C >= 85.5C"]]
[2,["uncorrected ECC errors 2 > 0"]]
exit 0
EOF

# ---- options ----

check_output 'man EXAMPLES: the MIG devices of medium by profile' \
	"cd '$TOP' && gpu-probe -t manifests/sim/seed-mig.yaml -n medium | jq -r 'select(.mig) | .mig.profile' | sort | uniq -c" <<'EOF'
      4 1g.10gb
     12 2g.20gb
EOF

check_output 'man EXAMPLES: -h names the query fields for a capture' \
	'echo "--query-gpu=$(gpu-probe -h | sed -n "s/^query: //p") --format=csv,noheader,nounits"' <<EOF
$QUERY
EOF

check_output 'node: -N, else $NODE_NAME, else the host name' \
	'gpu-probe -r crlf.csv -N n9 >o && jq -r .node o && NODE_NAME=n8 gpu-probe -r crlf.csv >o && jq -r .node o && NODE_NAME= gpu-probe -r crlf.csv >o && jq -r .node o | grep -qx "$(hostname)" && echo host' <<'EOF'
n9
n8
host
EOF

check 'usage: -h on stdout' 'gpu-probe -h >h.out && head -n 1 h.out | grep -q "^usage: gpu-probe"'
check 'usage: -V' 'gpu-probe -V | grep -qx "gpu-probe [0-9.]*"'
check 'usage: bad options and combinations exit 2' '
	must_fail 2 gpu-probe -Z 2>/dev/null &&
	must_fail 2 gpu-probe -m h200-mig.list 2>/dev/null &&
	must_fail 2 gpu-probe -n small 2>/dev/null &&
	must_fail 2 gpu-probe -r h100x8.csv -t "$SEED" 2>/dev/null &&
	must_fail 2 gpu-probe -T 0 2>/dev/null &&
	must_fail 2 gpu-probe -T 1.5 2>/dev/null &&
	must_fail 2 gpu-probe -r h100x8.csv extra 2>/dev/null'
check 'a write error ends with 1' \
	'must_fail 1 gpu-probe -r h100x8.csv >/dev/full 2>err && grep -q "write error" err'

done_testing
