# t/lib-image.sh: what the tests of the OCI images share (t/0065,
# t/0066; t/lib.sh is sourced first).

# lay C DIR: DIR/C is the layout of image C from DIR/C.tar; man_ C DIR:
# its manifest's path; blob DIR/C DIGEST: a blob's path.
lay() { [ -d "$2/$1" ] || { mkdir "$2/$1" && tar -C "$2/$1" -xf "$2/$1.tar"; }; }
blob() { echo "$1/blobs/sha256/${2#sha256:}"; }
man_() { lay "$1" "$2" && blob "$2/$1" "$(jq -r '.manifests[0].digest' "$2/$1/index.json")"; }
# layer C DIR N: layer N of image C, uncompressed, on stdout
layer() { gzip -dc "$(blob "$2/$1" "$(jq -r ".layers[$3].digest" "$(man_ "$1" "$2")")")"; }

# start_registry: Debian's docker-registry on a free loopback port, its
# storage in ./registry, stopped by its PID when the script exits; sets
# REG_PORT and REG (host:port).
start_registry() {
	REG_PORT=$(free_port)
	REG=127.0.0.1:$REG_PORT
	cat >registry.yml <<R
version: 0.1
log: {level: error, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $SCRATCH/registry}}
http: {addr: "$REG"}
R
	docker-registry serve registry.yml >registry.log 2>&1 &
	echo $! >registry.pid
	trap 'kill "$(cat "$SCRATCH/registry.pid")" 2>/dev/null' EXIT
}
