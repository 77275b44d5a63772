#!/bin/sh
# scripts/oci-image: an OCI image layout from directories, one layer each,
# the same bytes on every run (sorted entries, fixed owners and mtimes,
# gzip -n), with the config's entrypoint, command, env, user, workdir and
# labels, the index naming the image; the printed digest is the manifest's.
. "$(dirname "$0")/lib.sh"

umask 022
mkdir -p root1/bin root1/etc root2/srv
printf 'x' >root1/bin/tool && chmod 755 root1/bin/tool
echo hello >root1/etc/motd
ln -s tool root1/bin/alias
echo data >root2/srv/file
touch -d @123456789 root1/etc/motd
img() {
	oci-image -o "$1" -n k8s.io/test:local -e '["/bin/tool"]' -c '["--flag", "a b"]' \
		-E PATH=/bin -E LANG=C.UTF-8 -u 65534 -w /srv -l org.example/a=1 -l b=two -a amd64 root1 root2
}
blob() { echo "$1/blobs/sha256/${2#sha256:}"; }

check_output 'the digest printed is the manifest'"'"'s, named in the index' \
	'd=$(img lay) && test "$d" = "sha256:$(sha256sum "$(blob lay "$d")" | cut -d" " -f1)" &&
	 jq -r --arg d "$d" ".manifests[0] | [(.digest == \$d), .annotations[\"io.containerd.image.name\"],
		.annotations[\"org.opencontainers.image.ref.name\"], .platform.os, .platform.architecture] | join(\" \")" lay/index.json &&
	 cat lay/oci-layout; echo' <<'EOF'
true k8s.io/test:local local linux amd64
{"imageLayoutVersion":"1.0.0"}
EOF

check_output 'the config: what runs, as whom, where, labelled' \
	'm=$(blob lay "$(jq -r ".manifests[0].digest" lay/index.json)") &&
	 jq -c -S ".config" "$(blob lay "$(jq -r .config.digest "$m")")" &&
	 jq -r ".created, .os, (.rootfs.diff_ids | length), (.history | length)" "$(blob lay "$(jq -r .config.digest "$m")")"' <<'EOF'
{"Cmd":["--flag","a b"],"Entrypoint":["/bin/tool"],"Env":["PATH=/bin","LANG=C.UTF-8"],"Labels":{"b":"two","org.example/a":"1"},"User":"65534","WorkingDir":"/srv"}
1970-01-01T00:00:00Z
linux
2
2
EOF

check_output 'one gzip layer per directory, in order: entries sorted, root-owned, mtime 0; diff_ids match' \
	'm=$(blob lay "$(jq -r ".manifests[0].digest" lay/index.json)")
	 c=$(blob lay "$(jq -r .config.digest "$m")")
	 for i in 0 1; do
		l=$(blob lay "$(jq -r ".layers[$i].digest" "$m")")
		jq -r ".layers[$i].mediaType" "$m"
		test "$(jq -r ".layers[$i].size" "$m")" = "$(wc -c <"$l")" || echo size differs
		test "$(jq -r ".rootfs.diff_ids[$i]" "$c")" = "sha256:$(gzip -dc "$l" | sha256sum | cut -d" " -f1)" || echo diff_id differs
		gzip -dc "$l" | tar -tvf - --numeric-owner | awk "{print \$1, \$2, \$4, \$5, \$6, \$NF}"
	 done' <<'EOF'
application/vnd.oci.image.layer.v1.tar+gzip
drwxr-xr-x 0/0 1970-01-01 00:00 ./ ./
drwxr-xr-x 0/0 1970-01-01 00:00 ./bin/ ./bin/
lrwxrwxrwx 0/0 1970-01-01 00:00 ./bin/alias tool
-rwxr-xr-x 0/0 1970-01-01 00:00 ./bin/tool ./bin/tool
drwxr-xr-x 0/0 1970-01-01 00:00 ./etc/ ./etc/
-rw-r--r-- 0/0 1970-01-01 00:00 ./etc/motd ./etc/motd
application/vnd.oci.image.layer.v1.tar+gzip
drwxr-xr-x 0/0 1970-01-01 00:00 ./ ./
drwxr-xr-x 0/0 1970-01-01 00:00 ./srv/ ./srv/
-rw-r--r-- 0/0 1970-01-01 00:00 ./srv/file ./srv/file
EOF

check 'reproducible: the same tree gives the same tar, byte for byte, whenever made' \
	'img a.tar >d1 && touch root1/bin/tool root2/srv && sleep 1 && img b.tar >d2 && cmp d1 d2 && cmp a.tar b.tar &&
	 mkdir x && tar -C x -xf a.tar && test "$(jq -r ".manifests[0].digest" x/index.json)" = "$(cat d1)"'

check 'SOURCE_DATE_EPOCH sets every time stamp' \
	'SOURCE_DATE_EPOCH=86400 oci-image -o e root2 >/dev/null &&
	 jq -e ".manifests[0].annotations == null" e/index.json >/dev/null &&
	 m=$(blob e "$(jq -r ".manifests[0].digest" e/index.json)") &&
	 test "$(jq -r .created "$(blob e "$(jq -r .config.digest "$m")")")" = 1970-01-02T00:00:00Z &&
	 ! { gzip -dc "$(blob e "$(jq -r ".layers[0].digest" "$m")")" | tar -tvf - | grep -v -q "1970-01-02 00:00"; }'

check_output 'usage errors exit 2, bad input 1, each with a message' '
	must_fail 2 oci-image root1 2>&1
	must_fail 2 oci-image -o z 2>&1
	must_fail 2 oci-image -o z -e "/bin/sh" root1 2>&1
	must_fail 2 oci-image -o z -E NOEQUALS root1 2>&1
	must_fail 1 oci-image -o z missing-dir 2>&1
	must_fail 1 oci-image -o lay root1 2>&1; echo end' <<'EOF'
usage: oci-image -o OUT [-n name] [-e entrypoint-json] [-c cmd-json] [-E K=V]... [-u user] [-w workdir] [-l K=V]... [-a arch] DIR...
usage: oci-image -o OUT [-n name] [-e entrypoint-json] [-c cmd-json] [-E K=V]... [-u user] [-w workdir] [-l K=V]... [-a arch] DIR...
oci-image: -e: not a JSON array of strings: /bin/sh
oci-image: -E: not K=V: NOEQUALS
oci-image: missing-dir: not a directory
oci-image: lay: exists and is not empty
end
EOF

check 'the help goes to stdout with status 0' 'oci-image -h | grep -q "^usage: oci-image"'

done_testing
