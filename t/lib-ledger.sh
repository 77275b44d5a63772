# t/lib-ledger.sh: helpers of the tests that read and write the canhazgpu
# ledger in their own redis (start_redis and rcli are in t/lib.sh, which
# is sourced first). Each test sets NOW, the clock gr gives gpu-reserve.

# gr ARGS...: gpu-reserve at the test's clock $NOW.
gr() { K8SHAZGPU_NOW=$NOW gpu-reserve "$@"; }

# fresh N [PROVIDER]: an empty ledger of N GPUs, its provider PROVIDER
# (default nvidia; an empty PROVIDER writes none, as an old host has).
fresh() {
	rcli flushdb >/dev/null && rcli set canhazgpu:gpu_count "$1" >/dev/null || return 1
	[ -z "${2-nvidia}" ] || rcli set canhazgpu:provider "${2-nvidia}" >/dev/null
}

# queued N: the queue holds N entries.
queued() { test "$(rcli zcard canhazgpu:queue)" -eq "$1"; }

# ledger_keys: every canhazgpu key of the script's redis and its value
# (sets, hashes sorted; sorted sets with their scores), sorted by key.
ledger_keys() {
	rcli --scan --pattern 'canhazgpu:*' | sort | while read -r k; do
		case $(rcli type "$k") in
		string) printf '%s %s\n' "$k" "$(rcli get "$k")" ;;
		zset) printf '%s %s\n' "$k" "$(rcli zrange "$k" 0 -1 withscores | tr '\n' ' ')" ;;
		set) printf '%s %s\n' "$k" "$(rcli smembers "$k" | sort | tr '\n' ' ')" ;;
		hash) printf '%s %s\n' "$k" "$(rcli hgetall "$k" | paste -d= - - | sort | tr '\n' ' ')" ;;
		esac
	done
}
# keys: the ledger_keys of the test's redis.
keys() { ledger_keys; }
