# shellcheck shell=bash
# bench/lib.sh: what bench/run-bench and bench/regress-ab share (sourced)
KSM=/sys/kernel/mm/ksm
LOCK=${KSM_LOCK:-/tmp/ksm-dev.lock}	# one KSM user at a time
IDLE_MODE=booted	# lock_take: poll also holds the idle request (run-bench --idle)
HALTS=0			# lock_drop: idle-state entries but polling while held
KNOBS="run pages_to_scan sleep_millisecs use_zero_pages max_page_sharing merge_across_nodes smart_scan stable_node_chains_prune_millisecs"

# knobs: one line with every KSM knob value
knobs() {
	local k out=""
	for k in $KNOBS; do out="$out $k=$(cat $KSM/$k 2>/dev/null)"; done
	echo "${out# }"
}

# knobs_put LINE: write back every knob of a knobs() line that differs now
# (run last); prints "k=old->new" for each one it had to write
knobs_put() {
	local kv k v cur fixed=""
	for kv in $1; do
		k=${kv%%=*} v=${kv#*=}
		[ "$k" = run ] && continue
		cur=$(cat $KSM/$k 2>/dev/null) || continue
		[ "$cur" = "$v" ] && continue
		echo "$v" > $KSM/$k 2>/dev/null
		fixed="$fixed $k=$cur->$v"
	done
	for kv in $1; do
		k=${kv%%=*} v=${kv#*=}
		[ "$k" = run ] || continue
		cur=$(cat $KSM/run)
		[ "$cur" = "$v" ] && continue
		echo "$v" > $KSM/run
		fixed="$fixed run=$cur->$v"
	done
	[ -z "$fixed" ] || echo "${fixed# }"
}

# posint NAME VALUE: VALUE is a whole number >= 1, or one line naming the
# option (the caller's die) and exit 1
posint() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "option $1: invalid value '$2' (a whole number >= 1)"; }

# ymetric FILE KEY: the stressor-level value of KEY in a stress-ng YAML file
ymetric() {
	awk -v k="$2" '$1 == k":" && !done { print $2; done = 1 }' "$1" 2>/dev/null
}

# idle_poll FD: hold a PM QoS CPU latency request of 0 us on file
# descriptor FD, so idle CPUs poll instead of halting (docs/bench.md,
# Conditions); the kernel drops it when FD closes.  1 when it cannot
idle_poll() {
	[ -c /dev/cpu_dma_latency ] && [ -w /dev/cpu_dma_latency ] || return 1
	eval "exec $1> /dev/cpu_dma_latency" || return 1
	# one byte: read as hex text (4 bytes would be a binary s32)
	printf 0 >&"$1" || { eval "exec $1>&-"; return 1; }
}

# idle_halts: entries into every cpuidle state but polling, all CPUs
# ("-" without cpuidle)
idle_halts() {
	local s n=0 seen=""
	for s in /sys/devices/system/cpu/cpu[0-9]*/cpuidle/state[0-9]*; do
		[ -r "$s/usage" ] || continue
		seen=1
		[ "$(cat "$s/name")" = POLL ] || n=$(( n + $(cat "$s/usage") ))
	done
	[ -n "$seen" ] && echo "$n" || echo -
}

# lock_take: hold the KSM lock (fd 9) and, with IDLE_MODE=poll, the idle
# request (fd 8); run programs under it with both closed (8>&- 9>&-), so
# none that outlives the script keeps either
lock_take() {
	exec 9> "$LOCK"
	flock 9
	[ "$IDLE_MODE" = poll ] || return 0
	idle_poll 8 || die "cannot hold the idle request on /dev/cpu_dma_latency"
	sleep 0.1	# a CPU halted before the request is woken out of it first
	HALTS_HELD=$(idle_halts)
}

# lock_drop: release both; add the halts seen while they were held
lock_drop() {
	if [ "$IDLE_MODE" = poll ]; then
		HALTS=$(( HALTS + $(idle_halts) - HALTS_HELD ))
		exec 8>&-
	fi
	flock -u 9
	exec 9>&-
}
