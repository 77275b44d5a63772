#!/bin/sh
# tools/cache-sync/gitsync through t/unit/gitsync, against servers of this script's
# own (t/gitserve on 127.0.0.1): git daemon, smart HTTP (git
# http-backend), a listener that never answers, one that answers 401.
# A first clone links slot a; an update writes slot b and swaps the link;
# no change writes nothing; a pin checks out that commit, detached, and
# a pin already linked needs no server; an in-place update drops local
# changes; force reclones; failures (missing branch, repository not
# exported, 404, 401, nothing listening, a silent server, a cancelled
# transfer) leave the link, the linked slot and no tmp-* behind; Git LFS
# pointers are counted and named; bad items and a path that is not ours
# are refused; remove takes the link and both slots.
. "$(dirname "$0")/lib.sh"

gs() { unit gitsync "$@"; }
EVENTUALLY_HZ=10
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com

# libgit2 before 1.9 clones git:// in full (see tools/cache-sync/gitsync.h)
case $(pkg-config --modversion libgit2) in
1.[78].*) git_shallow=0 ;;
*) git_shallow=1 ;;
esac

# serve NAME MODE [ARG]: t/gitserve MODE on a free port, as NAME_PORT
pids=
stop() { [ -z "$pids" ] || { kill $pids; wait $pids; } 2>/dev/null; }
trap stop EXIT
serve() {
	sv_name=$1 sv_mode=$2
	shift 2
	for sv_try in 1 2 3 4 5; do
		sv_port=$(free_port)
		"$TOP/t/gitserve" "$sv_mode" "$sv_port" "$@" >"$sv_name.out" \
			2>"$sv_name.err" 3>&- 4>&- &
		sv_pid=$!
		if eventually 15 grep -qx ready "$sv_name.out"; then
			pids="$pids $sv_pid"
			eval "${sv_name}_PORT=$sv_port"
			return 0
		fi
		kill "$sv_pid" 2>/dev/null
	done
	echo "Bail out! gitserve $sv_mode did not start: $(cat "$sv_name.err")"
	exit 1
}

# the served repositories: repo.git (two commits), lfs.git; work/ pushes
mkdir srv c
git init -q -b main work && (
	cd work && echo one >a.txt && git add a.txt && git commit -qm one &&
	echo two >>a.txt && git commit -qam two
) && git clone -q --bare work srv/repo.git &&
	git -C work remote add origin "$SCRATCH/srv/repo.git" ||
	{ echo "Bail out! no fixture repository"; exit 1; }
git init -q -b main lfs && (
	cd lfs && mkdir m &&
	echo '*.bin filter=lfs diff=lfs merge=lfs -text' >.gitattributes &&
	echo '*.safetensors filter=lfs -text' >m/.gitattributes &&
	for f in a.bin b.bin c.bin m/w.safetensors notlfs.txt; do
		printf 'version https://git-lfs.github.com/spec/v1\noid sha256:%064d\nsize 12345\n' 7 >$f
	done &&
	echo 'real content' >real.bin && git add . && git commit -qm lfs
) && git clone -q --bare lfs srv/lfs.git ||
	{ echo "Bail out! no LFS fixture"; exit 1; }

serve G git "$SCRATCH/srv"
serve H http "$SCRATCH/srv"
serve M mute
serve U status
serve T trickle
GURL=git://127.0.0.1:$G_PORT/repo.git
HURL=http://127.0.0.1:$H_PORT/repo.git
C1=$(git -C srv/repo.git rev-parse main)
C0=$(git -C srv/repo.git rev-parse main~1)
ok() { echo "{\"reason\":\"\",\"message\":\"\",\"resolved\":\"$1\",\"lfsPointers\":0,\"held\":true,\"fetched\":${2:-true},\"progress\":\"${3:-ok}\"}"; }
failed() { echo "{\"reason\":\"$1\",\"message\":\"$2\",\"resolved\":\"\",\"lfsPointers\":0,\"held\":false,\"fetched\":false,\"progress\":\"none\"}"; }
# state P: the link's target, the linked commit, the tmp-* left
state() {
	echo "$(readlink "c/$1") $(git -C "c/$1" rev-parse HEAD)" \
		"$(ls c/.git-slots/"$1" | grep -c '^tmp-')"
}

check_output 'git://: a first clone is slot a at the branch tip, its files, its depth' '
	gs c g "$GURL" && state g && cat c/g/a.txt &&
	git -C c/g rev-list --count HEAD && git -C c/g status --porcelain &&
	git -C c/g rev-parse --abbrev-ref HEAD' <<EOF
$(ok "$C1")
.git-slots/g/a $C1 0
one
two
$((git_shallow ? 1 : 2))
main
EOF

check_output 'http: a first clone is one commit deep' '
	gs c h "$HURL" && state h && git -C c/h rev-list --count HEAD &&
	git -C c/h rev-parse --is-shallow-repository' <<EOF
$(ok "$C1")
.git-slots/h/a $C1 0
1
true
EOF

(cd work && echo three >>a.txt && echo new >b.txt && git add . &&
	git commit -qm three && git push -q origin main)
C2=$(git -C srv/repo.git rev-parse main)
check_output 'a new commit: written to slot b, the link swapped; slot a kept as it was' '
	gs c g "$GURL" && state g && cat c/g/a.txt c/g/b.txt &&
	git -C c/g status --porcelain && git -C c/.git-slots/g/a rev-parse HEAD &&
	gs c h "$HURL" && state h && git -C c/h rev-list --count HEAD' <<EOF
$(ok "$C2")
.git-slots/g/b $C2 0
one
two
three
new
$C1
$(ok "$C2")
.git-slots/h/b $C2 0
1
EOF

check_output 'no change: nothing fetched, no swap' '
	gs c g "$GURL" && state g && gs c h "$HURL" && state h &&
	git -C c/.git-slots/h/a rev-parse HEAD' <<EOF
$(ok "$C2" false none)
.git-slots/g/b $C2 0
$(ok "$C2" false none)
.git-slots/h/b $C2 0
$C1
EOF

# local changes in the slot an update will reuse: reset away
echo junk >c/.git-slots/g/a/untracked.txt
echo changed >c/.git-slots/g/a/a.txt
(cd work && git rm -q b.txt && echo four >>a.txt && git commit -qam four &&
	git push -q origin main)
C3=$(git -C srv/repo.git rev-parse main)
check_output 'an update in place: fetch, hard reset, untracked files removed' '
	gs c g "$GURL" && state g && ls c/g && cat c/g/a.txt &&
	git -C c/g status --porcelain --ignored && git -C c/g rev-parse --abbrev-ref HEAD &&
	gs c h "$HURL" && state h && ls c/h &&
	git -C c/h rev-parse --is-shallow-repository' <<EOF
$(ok "$C3")
.git-slots/g/a $C3 0
a.txt
one
two
three
four
main
$(ok "$C3")
.git-slots/h/a $C3 0
a.txt
true
EOF

short=$(echo "$C0" | cut -c1-8)
check_output 'a pinned commit (a prefix): a full clone at it, HEAD detached' '
	gs c h "$HURL" -c "$short" && state h && cat c/h/a.txt &&
	git -C c/h rev-parse --abbrev-ref HEAD && git -C c/h status --porcelain' <<EOF
$(ok "$C0")
.git-slots/h/b $C0 0
one
HEAD
EOF

check_output 'a pin already linked needs no server (a silent one, here)' '
	gs c h "http://127.0.0.1:$M_PORT/repo.git" -t 1 -c "$C0" && state h' <<EOF
$(ok "$C0" false none)
.git-slots/h/b $C0 0
EOF

check_output 'back to the branch: the other slot, reset to the tip, on branch main' '
	gs c h "$HURL" && state h && git -C c/h rev-parse --abbrev-ref HEAD' <<EOF
$(ok "$C3")
.git-slots/h/a $C3 0
main
EOF

check_output 'force: a fresh clone into the other slot, though nothing changed' '
	gs c g "$GURL" -f && state g && git -C c/g status --porcelain' <<EOF
$(ok "$C3")
.git-slots/g/b $C3 0
EOF

check_output 'a missing branch or commit: NotFound, the link and its slot untouched' '
	must_fail 1 gs c g "$GURL" -b nope && state g &&
	must_fail 1 gs c h "$HURL" -b nope && state h &&
	must_fail 1 gs c h "$HURL" -c 1234567 && state h &&
	must_fail 1 gs c new "$GURL" -b nope && ls c/.git-slots' <<EOF
$(failed NotFound "branch nope not found at $GURL")
.git-slots/g/b $C3 0
$(failed NotFound "branch nope not found at $HURL")
.git-slots/h/a $C3 0
{"reason":"NotFound","message":"commit 1234567 not found at $HURL","resolved":"","lfsPointers":0,"held":false,"fetched":true,"progress":"ok"}
.git-slots/h/a $C3 0
$(failed NotFound "branch nope not found at $GURL")
g
h
EOF

check_output 'a repository not there: NotFound over git:// and http' '
	must_fail 1 gs c x "git://127.0.0.1:$G_PORT/nope.git" &&
	must_fail 1 gs c x "http://127.0.0.1:$H_PORT/nope.git" && ls c' <<EOF
$(failed NotFound "repository git://127.0.0.1:$G_PORT/nope.git not found (remote error: access denied or repository not exported: /nope.git)")
$(failed NotFound "repository http://127.0.0.1:$H_PORT/nope.git not found (unexpected http status code: 404)")
g
h
EOF

free=$(free_port)
check_output 'nothing listening: Unreachable, the existing checkout kept' '
	must_fail 1 gs c g "git://127.0.0.1:$free/repo.git" && state g' <<EOF
$(failed Unreachable "git://127.0.0.1:$free/repo.git unreachable: failed to connect to 127.0.0.1: Connection refused")
.git-slots/g/b $C3 0
EOF

U=http://127.0.0.1:$U_PORT
check_output 'HTTP 401, 403: Unauthorized (a user:password in the URL never shown); 5xx: ServerError' '
	must_fail 1 gs c u "http://alice:s3cret@127.0.0.1:$U_PORT/401/r.git" &&
	must_fail 1 gs c u "$U/403/r.git" && must_fail 1 gs c u "$U/502/r.git" &&
	ls c' <<EOF
$(failed Unauthorized "$U/401/r.git wants credentials, and none are configured (remote authentication required but no callback set)")
$(failed Unauthorized "$U/403/r.git wants credentials, and none are configured (unexpected http status code: 403)")
$(failed ServerError "clone of $U/502/r.git failed: unexpected http status code: 502")
g
h
EOF

# seconds SECS CMD...: CMD ran within SECS seconds
seconds() {
	s_max=$1
	shift
	s_t0=$(date +%s)
	"$@"
	s_rc=$?
	[ $(($(date +%s) - s_t0)) -le "$s_max" ] || echo "took over $s_max s"
	return $s_rc
}
check_output 'a server that never answers: Timeout after -t seconds, no tmp-* left' '
	seconds 8 must_fail 1 gs c g "git://127.0.0.1:$M_PORT/repo.git" -t 2 &&
	state g &&
	seconds 8 must_fail 1 gs c t "http://127.0.0.1:$M_PORT/repo.git" -t 2 &&
	ls c/.git-slots' <<EOF
$(failed Timeout "no data from git://127.0.0.1:$M_PORT/repo.git for 2 s")
.git-slots/g/b $C3 0
$(failed Timeout "no data from http://127.0.0.1:$M_PORT/repo.git for 2 s")
g
h
EOF

check_output 'a server that sends progress messages and no pack: Timeout all the same' '
	seconds 8 must_fail 1 gs c tr "git://127.0.0.1:$T_PORT/repo.git" -t 2 &&
	ls c/.git-slots' <<EOF
$(failed Timeout "no data from git://127.0.0.1:$T_PORT/repo.git for 2 s")
g
h
EOF

check_output 'the progress callback stops the transfer: Cancelled, nothing left' '
	must_fail 1 gs c g "$GURL" -f -x 1 && state g' <<EOF
{"reason":"Cancelled","message":"transfer from $GURL stopped by the caller","resolved":"","lfsPointers":0,"held":false,"fetched":true,"progress":"last total is not done"}
.git-slots/g/b $C3 0
EOF

check_output 'Git LFS pointers under filter=lfs: counted, three named; the sync succeeds' '
	gs c lfs "git://127.0.0.1:$G_PORT/lfs.git" && cat c/lfs/real.bin' <<EOF
{"reason":"","message":"4 files are Git LFS pointers, not content (libgit2 does not run LFS): a.bin, b.bin, c.bin, …","resolved":"$(git -C srv/lfs.git rev-parse main)","lfsPointers":4,"held":true,"fetched":true,"progress":"ok"}
real content
EOF

check_output 'file:// clones (in full)' '
	gs c f "file://$SCRATCH/srv/repo.git" && state f &&
	git -C c/f rev-list --count HEAD' <<EOF
$(ok "$C3")
.git-slots/f/a $C3 0
4
EOF

check_output 'items that cannot be used: InvalidItem, nothing written' '
	for p in ../x .x "a b" ""; do must_fail 1 gs c "$p" "$GURL"; done &&
	must_fail 1 gs c x "ftp://127.0.0.1/repo.git" &&
	must_fail 1 gs c x "git@github.com:o/r.git" &&
	must_fail 1 gs c x "$GURL" -b "a..b" &&
	must_fail 1 gs c x "$GURL" -c 12345 &&
	must_fail 1 gs c x "$GURL" -c xyz1234 && ls c' <<EOF
$(failed InvalidItem 'path name \"../x\" is not one path component of [A-Za-z0-9._-]')
$(failed InvalidItem 'path name \".x\" is not one path component of [A-Za-z0-9._-]')
$(failed InvalidItem 'path name \"a b\" is not one path component of [A-Za-z0-9._-]')
$(failed InvalidItem 'path name \"\" is not one path component of [A-Za-z0-9._-]')
$(failed InvalidItem 'URL \"ftp://127.0.0.1/repo.git\" is not an https, http, git, ssh or file URL')
$(failed InvalidItem 'URL \"git@github.com:o/r.git\" is not an https, http, git, ssh or file URL')
$(failed InvalidItem 'branch name \"a..b\" is not valid')
$(failed InvalidItem 'commit \"12345\" is not 7 to 40 hex digits')
$(failed InvalidItem 'commit \"xyz1234\" is not 7 to 40 hex digits')
f
g
h
lfs
EOF

mkdir c/mine && echo keep >c/mine/file
check_output 'a path that is not our symlink is never touched' '
	must_fail 1 gs c mine "$GURL" && must_fail 1 gs -r c mine &&
	gs -q c mine && cat c/mine/file' <<EOF
$(failed IOError "c/mine exists and is not a cache checkout")
{"reason":"IOError","message":"c/mine exists and is not a cache checkout"}
{"current":null}
keep
EOF

check_output 'current: the linked commit, or null' '
	gs -q c g && gs -q c nothing' <<EOF
{"current":"$C3"}
{"current":null}
EOF

check_output 'remove: the link and both slots gone; again, nothing to do' '
	gs -r c g && gs -r c g && ls c c/.git-slots && gs -q c g' <<EOF
{"reason":"","message":""}
{"reason":"","message":""}
c:
f
h
lfs
mine

c/.git-slots:
f
h
lfs
{"current":null}
EOF

done_testing
