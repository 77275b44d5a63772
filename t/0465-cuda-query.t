#!/bin/sh
# cuda-query: the device query through a libcuda of the test's own that
# answers as the H200's driver did (CUDA 13.0, one device), exactly; its
# failures (no library, a missing function, a failed call, no device).
. "$(dirname "$0")/lib.sh"

command -v "${CC:-cc}" >/dev/null || skip_all 'no C compiler for the test library'

# A libcuda.so.1: FAKE_CUDA_INIT is cuInit's result, FAKE_CUDA_N the
# devices (default 1), FAKE_CUDA_NAME the first one's name.
cat >fakecuda.c <<'EOF'
#include <stdlib.h>
#include <string.h>
static int env(const char *n, int d) { const char *v = getenv(n); return v ? atoi(v) : d; }
int cuInit(unsigned f) { (void)f; return env("FAKE_CUDA_INIT", 0); }
int cuDriverGetVersion(int *v) { *v = 13000; return 0; }
int cuDeviceGetCount(int *n) { *n = env("FAKE_CUDA_N", 1); return 0; }
int cuDeviceGet(int *d, int o) { *d = o; return 0; }
int cuDeviceGetName(char *s, int n, int d) {
	const char *v = getenv("FAKE_CUDA_NAME");
	strncpy(s, d == 0 && v ? v : "NVIDIA H200", n); return 0; }
int cuDeviceGetUuid(unsigned char *u, int d) {
	static const unsigned char h200[16] = {0xef,0x3d,0xd3,0x80,0x59,0x42,0xad,0xdc,0x6b,0x66,0x8c,0xd5,0x55,0x89,0xcd,0x49};
	memcpy(u, h200, 16); u[15] += d; return 0; }
int cuDeviceTotalMem_v2(size_t *m, int d) { (void)d; *m = (size_t)143771 << 20; return 0; }
int cuDeviceGetAttribute(int *v, int a, int d) {
	switch (a) { case 75: *v = 9; break; case 76: *v = 0; break; case 50: *v = 0; break;
	case 33: *v = d; break; case 34: *v = 6; break; default: return 1; } return 0; }
int cuGetErrorName(int e, const char **s) {
	if (e == 100) { *s = "CUDA_ERROR_NO_DEVICE"; return 0; } return 1; }
EOF
${CC:-cc} -shared -fPIC -o libcuda.so.1 fakecuda.c || exit 1
sed '/cuGetErrorName/,$d' fakecuda.c >partial.c
${CC:-cc} -shared -fPIC -o partial.so partial.c || exit 1

check_output 'the driver and its device, as CUDA enumerates them' '
	LD_LIBRARY_PATH=$PWD cuda-query; echo "exit $?"' <<'EOF'
{"kind":"cuda","library":"libcuda.so.1","driver_version":"13.0","devices":1}
{"kind":"cuda_device","ordinal":0,"name":"NVIDIA H200","uuid":"GPU-ef3dd380-5942-addc-6b66-8cd55589cd49","compute_cap":"9.0","memory_mib":143771,"pci_bus_id":"0000:00:06.0"}
exit 0
EOF

check_output 'two devices by -l PATH; a name with a quote is escaped' '
	FAKE_CUDA_N=2 FAKE_CUDA_NAME="a \"b\"" cuda-query -l ./libcuda.so.1; echo "exit $?"' <<'EOF'
{"kind":"cuda","library":"./libcuda.so.1","driver_version":"13.0","devices":2}
{"kind":"cuda_device","ordinal":0,"name":"a \"b\"","uuid":"GPU-ef3dd380-5942-addc-6b66-8cd55589cd49","compute_cap":"9.0","memory_mib":143771,"pci_bus_id":"0000:00:06.0"}
{"kind":"cuda_device","ordinal":1,"name":"NVIDIA H200","uuid":"GPU-ef3dd380-5942-addc-6b66-8cd55589cd4a","compute_cap":"9.0","memory_mib":143771,"pci_bus_id":"0000:01:06.0"}
exit 0
EOF

check_output 'no library, a library without a function, a failed cuInit, no device, usage' '
	out env LD_LIBRARY_PATH= cuda-query -l ./nothing.so
	out cuda-query -l ./partial.so
	FAKE_CUDA_INIT=100 out cuda-query -l ./libcuda.so.1
	FAKE_CUDA_INIT=7 out cuda-query -l ./libcuda.so.1
	FAKE_CUDA_N=0 out cuda-query -l ./libcuda.so.1
	out cuda-query extra' <<'EOF'
exit 1
cuda-query: cannot load the CUDA driver library: ./nothing.so: cannot open shared object file: No such file or directory
exit 1
cuda-query: ./partial.so: no function cuGetErrorName
exit 1
cuda-query: cuInit: CUDA_ERROR_NO_DEVICE (100)
exit 1
cuda-query: cuInit: an unknown error (7)
{"kind":"cuda","library":"./libcuda.so.1","driver_version":"13.0","devices":0}
exit 1
cuda-query: CUDA sees no device
exit 2
usage: cuda-query [-l library]
EOF

check_output '-h' 'cuda-query -h' <<'EOF'
usage: cuda-query [-l library]
  -l PATH   the CUDA driver library (default libcuda.so.1)
  -h, -V    help, version
EOF
done_testing
