# shellcheck shell=bash
# bench/lib.sh: what bench/run-bench and bench/regress-ab share (sourced)
KSM=/sys/kernel/mm/ksm
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
