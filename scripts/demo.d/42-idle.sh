say "Idle costs nothing: the controller acts on watch events only"
qpid=$(pgrep -f "sched-queue .*-d $work/controller" | head -n 1)
cpu() { awk '{print $14 + $15}' "/proc/$qpid/stat"; }
writes() { curl -s "http://127.0.0.1:$port/metrics" | awk '/^k8shazgpu_controller_writes_total/ {n += $2} END {print n + 0}'; }
# the Jobs of the sections before finish on their own: wait for a quiet spell
quiet() {
	w1=$(writes)
	echo "$w1 writes"
	[ "$w1" = "$w0" ] || { w0=$w1; return 1; }
}
w0=
eventually -i 5 100 "5 s in which the controller writes nothing" quiet
c0=$(cpu) w0=$(writes)
sleep 10
c1=$(cpu) w1=$(writes)
echo "   in 10 quiet seconds: $(awk -v a="$c0" -v b="$c1" -v hz="$(getconf CLK_TCK)" 'BEGIN {printf "%.2f", (b - a) / hz}') CPU seconds, $((w1 - w0)) writes"
curl -s "http://127.0.0.1:$port/metrics" | grep -E '^k8shazgpu_controller_(watch_events_total|watch_lists_total|queue_depth)' | sed 's/^/   /'
