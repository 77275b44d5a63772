#!/bin/sh
# cert-make without a cluster: -o writes a CA and a serving certificate
# that openssl accepts, with the exact names and modes; -V makes them for
# any window; -c checks one with exact messages; bad options; an API
# server that is not there is a temporary failure.
. "$(dirname "$0")/lib.sh"

SVC='DNS:k8shazgpu-webhook,DNS:k8shazgpu-webhook.canhazgpu-system,DNS:k8shazgpu-webhook.canhazgpu-system.svc,DNS:k8shazgpu-webhook.canhazgpu-system.svc.cluster.local'
NAMES='"k8shazgpu-webhook","k8shazgpu-webhook.canhazgpu-system","k8shazgpu-webhook.canhazgpu-system.svc","k8shazgpu-webhook.canhazgpu-system.svc.cluster.local"'
LONG=2020-01-01T00:00:00Z,2099-12-31T00:00:00Z

# sans FILE: the subjectAltName list of a certificate, on one line.
sans() { openssl x509 -in "$1" -noout -ext subjectAltName | tail -n +2 | tr -d ' '; }

# ---- -o ------------------------------------------------------------------

check_output '-o: a chain openssl verifies, the exact names, the modes' '
	cert-make -o d -H 127.0.0.1 -H ::1 -H webhook.example >d.json &&
	openssl verify -CAfile d/ca.crt d/tls.crt && sans d/tls.crt &&
	stat -c "%n %a" d/ca.crt d/tls.crt d/tls.key &&
	jq -c ".names, .dir" d.json &&
	test "$(jq -r .notAfter d.json)" = "$(date -u -d "$(openssl x509 -in d/tls.crt -noout -enddate | cut -d= -f2)" +%Y-%m-%dT%H:%M:%SZ)" &&
	ls -A d' <<X
d/tls.crt: OK
$SVC,IPAddress:127.0.0.1,IPAddress:0:0:0:0:0:0:0:1,DNS:webhook.example
d/ca.crt 644
d/tls.crt 644
d/tls.key 600
[$NAMES,"127.0.0.1","::1","webhook.example"]
"d"
ca.crt
tls.crt
tls.key
X

check_output '-o: a CA for signing only, a serving certificate for serving only, P-256 keys' '
	openssl x509 -in d/ca.crt -noout -ext basicConstraints,keyUsage | tr -d " " &&
	openssl x509 -in d/tls.crt -noout -ext basicConstraints,keyUsage,extendedKeyUsage | tr -d " " &&
	openssl x509 -in d/tls.crt -noout -subject -issuer &&
	openssl pkey -in d/tls.key -noout -text | grep "^NIST CURVE" &&
	openssl verify -purpose sslserver -CAfile d/ca.crt d/tls.crt &&
	test "$(openssl pkey -in d/tls.key -pubout)" = "$(openssl x509 -in d/tls.crt -noout -pubkey)"' <<'X'
X509v3BasicConstraints:critical
CA:TRUE
X509v3KeyUsage:critical
CertificateSign,CRLSign
X509v3BasicConstraints:critical
CA:FALSE
X509v3KeyUsage:critical
DigitalSignature
X509v3ExtendedKeyUsage:
TLSWebServerAuthentication
subject=CN = k8shazgpu-webhook.canhazgpu-system.svc
issuer=CN = k8shazgpu-webhook.canhazgpu-system.svc-ca
NIST CURVE: P-256
d/tls.crt: OK
X

check '-o again: a new CA, the old one no longer verifies the new certificate' '
	cp d/ca.crt old-ca.crt && cert-make -o d >/dev/null &&
	! cmp -s old-ca.crt d/ca.crt && openssl verify -CAfile d/ca.crt d/tls.crt &&
	! openssl verify -CAfile old-ca.crt d/tls.crt 2>/dev/null &&
	test "$(stat -c %a d/tls.key)" = 600 && ! ls -A d | grep -q tmp'

check_output '-V: an exact window, RFC 3339 offsets too; -n and -s name the Service' '
	cert-make -o v -n team-a -s hook -V 2020-01-01T01:00:00+01:00,2021-06-30T12:00:00.5Z &&
	openssl x509 -in v/tls.crt -noout -startdate -enddate && sans v/tls.crt' <<'X'
{"dir":"v","notAfter":"2021-06-30T12:00:00Z","names":["hook","hook.team-a","hook.team-a.svc","hook.team-a.svc.cluster.local"]}
notBefore=Jan  1 00:00:00 2020 GMT
notAfter=Jun 30 12:00:00 2021 GMT
DNS:hook,DNS:hook.team-a,DNS:hook.team-a.svc,DNS:hook.team-a.svc.cluster.local
X

# ---- -c --------------------------------------------------------------------

cert-make -o good -H 127.0.0.1 -V "$LONG" >/dev/null
cert-make -o expired -V 2020-01-01T00:00:00Z,2021-01-01T00:00:00Z >/dev/null
cert-make -o future -V 2090-01-01T00:00:00Z,2099-01-01T00:00:00Z >/dev/null

check_output '-c: a good certificate, with and without the names asked' '
	cert-make -c good/tls.crt &&
	cert-make -c good/tls.crt -n canhazgpu-system -H 127.0.0.1 &&
	cert-make -c good/tls.crt -s k8shazgpu-webhook -H k8shazgpu-webhook.canhazgpu-system' <<X
{"notAfter":"2099-12-31T00:00:00Z","names":[$NAMES,"127.0.0.1"]}
{"notAfter":"2099-12-31T00:00:00Z","names":[$NAMES,"127.0.0.1"]}
{"notAfter":"2099-12-31T00:00:00Z","names":[$NAMES,"127.0.0.1"]}
X

check_output '-c: expired, not yet valid, a name missing, an IP missing: exact messages, status 1' '
	exec 2>&1
	cert-make -c expired/tls.crt; echo "exit $?"
	cert-make -c future/tls.crt; echo "exit $?"
	cert-make -c good/tls.crt -n other; echo "exit $?"
	cert-make -c good/tls.crt -H 127.0.0.2; echo "exit $?"
	cert-make -c good/tls.crt -H ::1; echo "exit $?"
	cert-make -c good/tls.crt -H webhook.example; echo "exit $?"' <<'X'
cert-make: expired/tls.crt: certificate expired at 2021-01-01T00:00:00Z
exit 1
cert-make: future/tls.crt: certificate not valid before 2090-01-01T00:00:00Z
exit 1
cert-make: good/tls.crt: does not name k8shazgpu-webhook.other
exit 1
cert-make: good/tls.crt: does not name 127.0.0.2
exit 1
cert-make: good/tls.crt: does not name ::1
exit 1
cert-make: good/tls.crt: does not name webhook.example
exit 1
X

check_output '-c: a file that is no certificate, a key, no file' '
	exec 2>&1
	echo hello >hello.txt
	cert-make -c hello.txt; echo "exit $?"
	cert-make -c good/tls.key; echo "exit $?"
	cert-make -c nosuch.crt; echo "exit $?"' <<'X'
cert-make: hello.txt: no PEM certificate
exit 1
cert-make: good/tls.key: no PEM certificate
exit 1
cert-make: nosuch.crt: No such file or directory
exit 1
X

check_output '-o into a directory that cannot be made' '
	exec 2>&1
	cert-make -o nodir/sub; echo "exit $?"
	: >plain; cert-make -o plain; echo "exit $?"' <<'X'
cert-make: nodir/sub: No such file or directory
exit 1
cert-make: plain/.ca.crt.tmp: Not a directory
exit 1
X

# ---- usage -------------------------------------------------------------------

check_output 'bad options: a message, the usage, status 2' '
	for args in "-D 0" "-D 10x" "-R 365" "-D 10 -R 10" "-W -1" "-o x -V 2020-01-01T00:00:00Z" \
		"-o x -V 2021-01-01T00:00:00Z,2020-01-01T00:00:00Z" "-o x -V 2020-13-01T00:00:00Z,2021-01-01T00:00:00Z" \
		"-V $LONG" "-o x -D 5 -V $LONG" "-o x -c y" "-H a_b" "-H 1.2.3.4.5" "-n Team" "-s a.b" "-S -x-" \
		"-o x extra"; do
		set -f; cert-make $args 2>err >/dev/null; rc=$?; set +f
		echo "$rc $(grep -v "^usage:\|^  " err)"
	done' <<'X'
2 cert-make: -D 0: expected days from 1 to 36500
2 cert-make: -D 10x: expected days from 1 to 36500
2 cert-make: -R 365: must be less than -D 365
2 cert-make: -R 10: must be less than -D 10
2 cert-make: -W -1: expected seconds from 0 to 3600
2 cert-make: -V 2020-01-01T00:00:00Z: expected notbefore,notafter (RFC 3339)
2 cert-make: -V 2021-01-01T00:00:00Z,2020-01-01T00:00:00Z: notafter must come after notbefore
2 cert-make: -V 2020-13-01T00:00:00Z,2021-01-01T00:00:00Z: notbefore: month 13 is not 01 to 12
2 
2 
2 
2 cert-make: -H a_b: not a DNS name or IP address
2 cert-make: -H 1.2.3.4.5: not a DNS name or IP address
2 cert-make: -n Team: not a namespace name
2 cert-make: -s a.b: not a Service name
2 cert-make: -S -x-: not a Secret name
2 
X

# Each part of a time against the calendar: days its month has in that
# year (leap years by the Gregorian rule), hours, minutes, seconds (no
# leap second: a certificate holds none), offsets, and the years a
# certificate's time can hold once the offset is applied; then times
# right at those bounds, which make a certificate with exactly them.
check_output '-V: times the calendar has not are refused, naming what is wrong; status 2, no certificate' '
	for t in 2021-02-30T00:00:00Z 2021-02-29T00:00:00Z 1900-02-29T00:00:00Z 2021-04-31T00:00:00Z \
		2021-06-31T00:00:00Z 2021-09-31T00:00:00Z 2021-11-31T00:00:00Z 2021-01-32T00:00:00Z 2021-01-00T00:00:00Z \
		2021-00-10T00:00:00Z 2021-01-01T24:00:00Z 2021-01-01T23:60:00Z 2016-12-31T23:59:60Z \
		2021-01-01T00:00:00+24:00 2021-01-01T00:00:00-00:60 0000-01-01T00:00:00+00:01 \
		2021-1-01T00:00:00Z " 2021-01-01T00:00:00Z" 2021-01-01T00:00:00.Z 2021-01-01T00:00:00+1:00 \
		2021-01-01 2021-01-01T00:00:00 +2021-01-01T00:00:00Z 2021-01-01T00:00:00ZZ; do
		cert-make -o bad -V "$t,9999-12-31T23:59:59Z" 2>err >/dev/null; rc=$?
		echo "$rc $(grep -v "^usage:\|^  " err | sed "s/,9999-12-31T23:59:59Z//")"
	done; test ! -e bad' <<'X'
2 cert-make: -V 2021-02-30T00:00:00Z: notbefore: 2021-02 has 28 days, not 30
2 cert-make: -V 2021-02-29T00:00:00Z: notbefore: 2021-02 has 28 days, not 29
2 cert-make: -V 1900-02-29T00:00:00Z: notbefore: 1900-02 has 28 days, not 29
2 cert-make: -V 2021-04-31T00:00:00Z: notbefore: 2021-04 has 30 days, not 31
2 cert-make: -V 2021-06-31T00:00:00Z: notbefore: 2021-06 has 30 days, not 31
2 cert-make: -V 2021-09-31T00:00:00Z: notbefore: 2021-09 has 30 days, not 31
2 cert-make: -V 2021-11-31T00:00:00Z: notbefore: 2021-11 has 30 days, not 31
2 cert-make: -V 2021-01-32T00:00:00Z: notbefore: 2021-01 has 31 days, not 32
2 cert-make: -V 2021-01-00T00:00:00Z: notbefore: 2021-01 has 31 days, not 00
2 cert-make: -V 2021-00-10T00:00:00Z: notbefore: month 00 is not 01 to 12
2 cert-make: -V 2021-01-01T24:00:00Z: notbefore: hour 24 is not 00 to 23
2 cert-make: -V 2021-01-01T23:60:00Z: notbefore: minute 60 is not 00 to 59
2 cert-make: -V 2016-12-31T23:59:60Z: notbefore: second 60 is not 00 to 59 (a certificate holds no leap second)
2 cert-make: -V 2021-01-01T00:00:00+24:00: notbefore: offset +24:00 is not -23:59 to +23:59
2 cert-make: -V 2021-01-01T00:00:00-00:60: notbefore: offset -00:60 is not -23:59 to +23:59
2 cert-make: -V 0000-01-01T00:00:00+00:01: notbefore: in UTC outside 0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z
2 cert-make: -V 2021-1-01T00:00:00Z: notbefore: not an RFC 3339 time (YYYY-MM-DDTHH:MM:SS[.frac], then Z or +HH:MM)
2 cert-make: -V  2021-01-01T00:00:00Z: notbefore: not an RFC 3339 time (YYYY-MM-DDTHH:MM:SS[.frac], then Z or +HH:MM)
2 cert-make: -V 2021-01-01T00:00:00.Z: notbefore: not an RFC 3339 time (YYYY-MM-DDTHH:MM:SS[.frac], then Z or +HH:MM)
2 cert-make: -V 2021-01-01T00:00:00+1:00: notbefore: not an RFC 3339 time (YYYY-MM-DDTHH:MM:SS[.frac], then Z or +HH:MM)
2 cert-make: -V 2021-01-01: notbefore: not an RFC 3339 time (YYYY-MM-DDTHH:MM:SS[.frac], then Z or +HH:MM)
2 cert-make: -V 2021-01-01T00:00:00: notbefore: not an RFC 3339 time (YYYY-MM-DDTHH:MM:SS[.frac], then Z or +HH:MM)
2 cert-make: -V +2021-01-01T00:00:00Z: notbefore: not an RFC 3339 time (YYYY-MM-DDTHH:MM:SS[.frac], then Z or +HH:MM)
2 cert-make: -V 2021-01-01T00:00:00ZZ: notbefore: not an RFC 3339 time (YYYY-MM-DDTHH:MM:SS[.frac], then Z or +HH:MM)
X
check_output '-V: notafter is checked the same way' '
	cert-make -o bad -V 2020-01-01T00:00:00Z,2023-02-29T12:00:00Z 2>&1 >/dev/null | grep -v "^usage:\|^  "; test ! -e bad' <<'X'
cert-make: -V 2020-01-01T00:00:00Z,2023-02-29T12:00:00Z: notafter: 2023-02 has 28 days, not 29
X
check_output '-V: February 29 of leap years (2000, 2024), the last second of a year, lowercase t and z, the bounds of four-digit years' '
	cert-make -o leap -V 2000-02-29T23:59:59Z,2024-02-29t23:59:59z >/dev/null &&
	openssl x509 -in leap/tls.crt -noout -startdate -enddate &&
	cert-make -o edge -V 0000-01-01T00:00:00Z,9999-12-31T23:59:59Z >/dev/null &&
	openssl x509 -in edge/tls.crt -noout -startdate -enddate' <<'X'
notBefore=Feb 29 23:59:59 2000 GMT
notAfter=Feb 29 23:59:59 2024 GMT
notBefore=Jan  1 00:00:00 0 GMT
notAfter=Dec 31 23:59:59 9999 GMT
X

check '-h prints the usage and help on stdout; --version' '
	cert-make -h >h.out && grep -q "^usage: cert-make" h.out && grep -q "^  -V nb,na" h.out &&
	test "$(cert-make --version)" = "cert-make 0.1.0"'

# ---- an API server that is not there -------------------------------------------

PORT=$(free_port)
cat >kubeconfig <<X
apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: "https://127.0.0.1:$PORT", insecure-skip-tls-verify: true}
users:
- name: u
  user: {token: t}
contexts:
- name: x
  context: {cluster: c, user: u}
current-context: x
X
check_output 'no API server on the port: 75, naming the request, nothing on stdout' '
	must_fail 75 cert-make --kubeconfig kubeconfig 2>err && sed "s/: Failed to connect.*//" err' <<X
cert-make: GET https://127.0.0.1:$PORT/api/v1/namespaces/canhazgpu-system/secrets/k8shazgpu-webhook-certs
X

done_testing
