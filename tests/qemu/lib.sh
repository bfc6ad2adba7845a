# SPDX-License-Identifier: GPL-2.0
#
# Shell shared by the QEMU rig's drivers in the test VM (qemu_guests,
# qemu_life, qemu_cli; sourced from /lib/qemu-rig.sh): the arms, one
# Linux guest from start to finish with its checks and the diagnosis of
# a stall, and the steps of a guest in "l2work grow" across policy
# switches.  The caller defines pass() and fail() (its PASS:/FAIL: lines).
#
# Globals the caller may set before boot(): work (l2work's arguments,
# "64:3"), mem (the guest's MiB, 256), cpu (QEMU's -cpu, host), limit (one
# guest's seconds, 600), l2extra (more guest command-line words), l2boot
# (quiet, the default, or verbose: the guest kernel's console output on),
# l2kernel (bzimage, the default: Debian's vmlinuz through SeaBIOS and
# the kernel's own decompressor; pvh: the same kernel uncompressed, an
# ELF that QEMU boots at its PVH entry, as Firecracker-like VMMs do),
# plant (planted bugs, words: sum, the expected sums one off; stall, the
# guests spin in l2work instead of running the workload; nogate, a grow
# guest let take all its steps at once, and taking them, before the
# first phase), l1 (the L1 VMM: 7.2, Debian 12's qemu-system-x86_64, the
# default, or current, Debian 13's, /bin/qemu-current: mkrig.sh; taken
# from kp.qemu.l1= for every driver).

D=/sys/kernel/debug/kvm
P=/sys/module/kvm/parameters
T=/sys/kernel/tracing
work=${work:-64:3}
mem=${mem:-256}
cpu=${cpu:-host}
limit=${limit:-600}
l2boot=${l2boot:-quiet}
l2kernel=${l2kernel:-bzimage}
plant=${plant:-}
l1=${l1:-$(tr ' ' '\n' < /proc/cmdline | sed -n 's/^kp\.qemu\.l1=//p' | tail -n1)}
l1=${l1:-7.2}

# vmm [<l1>]: the command that starts QEMU <l1> (default $l1), firmware
# directories included.
vmm() {
	case ${1:-$l1} in
	7.2) echo "qemu-system-x86_64 -L /usr/share/qemu -L /usr/share/seabios" ;;
	current) echo qemu-current ;;
	*) echo "vmm: unknown L1 '${1:-$l1}' (7.2 or current)" >&2; echo false ;;
	esac
}
# vmm_version [<l1>]: its version line.
vmm_version() { $(vmm "$@") --version 2>&1 | head -n1; }

# qopt <namespace> <name>: kp.<namespace>.<name>= of the kernel command line.
qopt() { tr ' ' '\n' < /proc/cmdline | sed -n "s/^kp\.$1\.$2=//p" | tail -n1; }
# qset <namespace> <variable> [<name>]: the variable takes kp.<namespace>.<name>
# (default: the variable's name) if the command line has it.
qset() { v=$(qopt "$1" "${3:-$2}"); [ -z "$v" ] || eval "$2=\$v"; }
planted() { case " $(echo "$plant" | tr , ' ') " in *" $1 "*) return 0 ;; esac; return 1; }
now() { cut -d. -f1 /proc/uptime; }
# Hundredths of a second since boot.
now_cs() { cut -d' ' -f1 /proc/uptime | tr -d .; }
cs_to_s() { echo "$(($1 / 100)).$(($1 % 100 / 10))"; }
# stat_of <vm debugfs dir> <name>
stat_of() { cat "$1/$2" 2>/dev/null || echo -; }
vm_of() { ls -d $D/$1-* 2>/dev/null | head -n1; }

# The guest's kernel command line.  Quiet: the kernel's boot messages
# cross two levels of emulation one port write per character (an exit
# to the test VM's KVM and its QEMU each); only init's and l2work's
# lines (@@L2UP, @@L2PROG per pass, @@L2WORK, @@L2DONE) are printed.
# no_timer_check, as for the test VM (tests/vm/run-vm.sh): the boot-time
# IO-APIC timer check counts ticks against a loop and measures nothing
# but the load of the machine under the emulator.
l2_append() {
	case $l2boot in
	verbose) echo "console=ttyS0 panic=-1 nokaslr l2.work=$1 $l2extra" ;;
	*) echo "console=ttyS0 panic=-1 nokaslr quiet no_timer_check l2.work=$1 $l2extra" ;;
	esac
}

l2_kernel() { case $l2kernel in pvh) echo /l2/vmlinux ;; *) echo /l2/vmlinuz ;; esac; }

# l2_qemu <serial log> <work> [<monitor port>]: starts Debian's QEMU
# ($l1) with the Linux guest in the background; $qpid is its pid.  With $gate
# set (a path), the serial port is a pair of FIFOs, $gate.in (the guest's
# input: the rig's fd 7, see go) and $gate.out (copied to the log).
l2_qemu() {
	: > "$1"
	serial="file:$1"
	if [ -n "$gate" ]; then
		rm -f "$gate.in" "$gate.out"
		mkfifo "$gate.in" "$gate.out" || return 1
		exec 7<> "$gate.in"
		cat "$gate.out" >> "$1" &
		serial="pipe:$gate"
	fi
	$(vmm) -accel kvm -cpu "$cpu" -smp 1 -m "${mem}M" -nodefaults \
		-display none -no-reboot \
		-serial "$serial" -kernel "$(l2_kernel)" -initrd /l2/initrd.gz \
		${3:+-monitor tcp:127.0.0.1:$3,server,nowait} \
		-append "$(l2_append "$2")" > "$1.qemu" 2>&1 &
	qpid=$!
}

# load_arm <arm>: stock (Debian's modules) or ours with
# <policy>[-<nr_pages>][-<engine>][-<gup>] (auto-8, auto-8-fault,
# auto-8-fast, adaptive), written to the sysfs defaults of new VMs
# after the modules load, as an operator whose VMM knows nothing of the
# ioctl would (a policy module such as adaptive is autoloaded by name).
load_arm() {
	case $1 in
	stock) kvm-reload stock ;;
	*)
		set -- $(echo "$1" | tr - ' ')
		pol=$1 eng="" gup="" nr=""
		shift
		for w in "$@"; do
			case $w in
			[0-9]*) nr=$w ;;
			batch|fault) eng=$w ;;
			fast|nofault) gup=$w ;;
			*) echo "load_arm: unknown word '$w'" >&2; return 1 ;;
			esac
		done
		kvm-reload ours ${eng:+prefetch_engine=$eng} || return 1
		echo "$pol" > $P/prefetch_policy || return 1
		[ -z "$nr" ] || echo "$nr" > $P/prefetch_nr_pages || return 1
		[ -z "$gup" ] || echo "$gup" > $P/prefetch_gup || return 1
		;;
	esac
}

# expect_sum <work>: the sum "l2work <MiB> <passes>" must print (cached;
# planted "sum": one off in the last hex digit).
expect_sum() {
	f=/tmp/l2-expect-$(echo "$1" | tr : -)
	[ -s "$f" ] || l2work sum $(echo "$1" | tr : ' ') > "$f"
	e=$(cat "$f")
	if planted sum; then
		case $e in *0) e=${e%?}1 ;; *) e=${e%?}0 ;; esac
	fi
	echo "$e"
}

# What a stalled vCPU does: two reads of its counters 5 s apart and 2 s
# of kvm_exit/kvm_page_fault/kvm_async_pf events, as exit reasons and
# the most frequent guest RIPs.
diagnose() {
	d=$1
	for s in exits pf_taken halt_exits halt_wakeup io_exits irq_injections \
		 irq_exits nmi_injections mmio_exits request_irq_exits signal_exits; do
		a=$(stat_of "$d" $s); eval "a_$s=$a"
	done
	sleep 5
	line="l2-stall: over 5 s:"
	for s in exits pf_taken halt_exits halt_wakeup io_exits irq_injections \
		 irq_exits nmi_injections mmio_exits request_irq_exits signal_exits; do
		b=$(stat_of "$d" $s); eval "a=\$a_$s"
		case "$a$b" in *[!0-9]*|'') continue ;; esac
		line="$line $s+$((b - a))"
	done
	echo "$line"
	if [ -d $T/events/kvm ]; then
		echo > $T/trace
		for e in kvm_exit kvm_page_fault kvm_inj_virq kvm_apic_ipi kvm_async_pf_ready \
			 kvm_async_pf_not_present kvm_msr kvm_pio kvm_hv_timer_state; do
			[ -d $T/events/kvm/$e ] && echo 1 > $T/events/kvm/$e/enable
		done
		echo 1 > $T/tracing_on
		sleep 2
		echo 0 > $T/tracing_on
		for e in $T/events/kvm/*/enable; do echo 0 > "$e"; done
		cat $T/trace > /tmp/stall-trace.txt
		echo "l2-stall: events in 2 s: $(grep -c ': kvm_' /tmp/stall-trace.txt)"
		sed -n 's/.*: \(kvm_[a-z_]*\):.*/\1/p' /tmp/stall-trace.txt | sort | uniq -c |
			sort -rn | head -n 8 | sed 's/^/l2-stall: event /'
		sed -n 's/.*kvm_exit: .*reason \([A-Za-z_0-9]*\).*/\1/p' /tmp/stall-trace.txt |
			sort | uniq -c | sort -rn | head -n 8 | sed 's/^/l2-stall: exit reason /'
		sed -n 's/.*kvm_exit: .*rip 0x\([0-9a-f]*\).*/\1/p' /tmp/stall-trace.txt |
			sort | uniq -c | sort -rn | head -n 6 |
			while read -r n rip; do
				echo "l2-stall: rip $rip x$n $(sym "$rip")"
			done
		grep -m 12 ': kvm_' /tmp/stall-trace.txt | sed 's/^/l2-stall: trace /'
	fi
}

# monitor <port>: the guest's registers and the code at its RIP, from
# QEMU's monitor.
mon() {
	{ printf '%s\n' "$@"; sleep 4; } |
		timeout 12 nc 127.0.0.1 "$port" 2>/dev/null | tr -d '\r'
}
monitor() {
	port=$1
	mon 'info registers' 'x/12i $pc' 'info lapic' > /tmp/monitor.txt
	grep -E '^(RIP|RAX|RBX|RCX|RDX|RSI|RDI|RBP|RSP|CR0|EFL)|^0xffffffff8[0-9a-f]*:  |LVT|timer|ISR|IRR|TPR|PPR' \
		/tmp/monitor.txt | sed 's/^/l2-stall: monitor /'
	# The monitor knows no 64-bit register names: the addresses from
	# "info registers".
	rsp=$(sed -n 's/.*RSP=\([0-9a-f]*\).*/\1/p' /tmp/monitor.txt | head -n1)
	rbx=$(sed -n 's/.*RBX=\([0-9a-f]*\).*/\1/p' /tmp/monitor.txt | head -n1)
	[ -n "$rsp" ] || return 0
	mon "x/4xg 0x$rbx" "x/96xg 0x$rsp" > /tmp/monitor-mem.txt
	grep -m2 "^$rbx:" /tmp/monitor-mem.txt | sed 's/^/l2-stall: monitor lock /'
	words /tmp/monitor-mem.txt > /tmp/words.txt
	# The return addresses on the stack: kernel text words, in order.
	grep '^ffffffff8' /tmp/words.txt | head -n 12 |
		while read -r a; do echo "l2-stall: stack $a $(sym "$a")"; done
	regs /tmp/words.txt "this stack"
	# The stack the interrupt came from: the last stack pointer saved at
	# the top of this one (the IRQ stack), and the pt_regs above it.
	prev=$(grep '^ffa0' /tmp/words.txt | tail -n1)
	[ -n "$prev" ] || return 0
	mon "x/160xg 0x$prev" > /tmp/monitor-prev.txt
	words /tmp/monitor-prev.txt > /tmp/words-prev.txt
	grep '^ffffffff8' /tmp/words-prev.txt | head -n 8 |
		while read -r a; do echo "l2-stall: prev-stack $a $(sym "$a")"; done
	regs /tmp/words-prev.txt "the stack at $prev"
}

# words <x/..xg output>: its values, one per line, without 0x.
words() {
	sed -n 's/^[0-9a-f]*: //p' "$1" | tr ' ' '\n' | sed -n 's/^0x\([0-9a-f]*\)$/\1/p'
}

# regs <words> <where>: the interrupt frames (RIP, CS 0x10, RFLAGS, RSP,
# SS 0x18 or 0) in a stack dump: where an interrupt or exception came in and
# whether the interrupted code had interrupts enabled (IF, bit 9).
regs() {
	awk '{ w[NR] = $1 } END {
		for (i = 1; i + 4 <= NR; i++)
			if (w[i + 1] == "0000000000000010" && w[i] ~ /^ffffffff8/ &&
			    (w[i + 4] == "0000000000000018" || w[i + 4] == "0000000000000000") &&
			    w[i + 3] ~ /^ff/)
				print w[i], w[i + 2]
	}' "$1" | head -n 4 | while read -r rip fl; do
		if_bit=$(( (0x$fl >> 9) & 1 ))
		echo "l2-stall: frame on $2: interrupted rip $rip $(sym "$rip") rflags $fl IF=$if_bit"
	done
}

# sym <hex address>: the kernel symbol it is in (the guest runs the test
# VM's kernel).  Addresses are compared as 16-digit strings (awk's
# numbers are doubles, too coarse for them); the offset from the low 8
# digits.
sym() {
	awk -v a="$(printf '%016s' "$1" | tr ' ' 0)" '
		function hex(s,  i, v) { v = 0; s = tolower(s)
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v }
		$2 ~ /^[tTwW]$/ && ($1 "") <= (a "") && ($1 "") > (best "") { best = $1; name = $3 }
		END { if (name != "") printf "%s+0x%x\n", name, hex(substr(a, 9)) - hex(substr(best, 9)) }' /proc/kallsyms
}

# boot <arm> <run> <tag>: one guest running "l2work $work", start to
# finish; prints its @@QEMU line and a PASS or FAIL line.  ok: the guest
# printed "@@L2WORK ok" with the sum expect_sum computes and powered off.
# Stalled: for 40 s neither the serial log nor the VM's pf_taken,
# io_exits or halt_exits moved (a stalled guest of the QEMU 7.2 TCG bug
# exits on external interrupts only: tests/qemu/README.rst), or it ran
# past $limit.  Also sets b_start and b_end (hundredths of a second of
# the test VM's uptime).
boot() {
	arm=$1 run=$2 tag=$3
	# (the PASS/FAIL lines name an L1 other than 7.2)
	who=$arm
	[ "$l1" = 7.2 ] || who=$arm@$l1
	log=/tmp/l2-$tag.log
	port=$((5500 + ${run##*.}))
	start=$(now)
	b_start=$(now_cs)
	w=$work
	planted stall && w=spin
	l2_qemu "$log" "$w" "$port"
	result=""
	last=""
	quiet=0
	d=""
	pf="" win="" map="" skp="" ex=""
	while kill -0 $qpid 2>/dev/null; do
		sleep 1
		[ -n "$d" ] || d=$(vm_of $qpid)
		# The last values read while the VM was there (its directory
		# goes with it).
		io="" hl=""
		if [ -n "$d" ] && v=$(cat "$d/exits" 2>/dev/null); then
			ex=$v
			pf=$(stat_of "$d" pf_taken) win=$(stat_of "$d" prefetch_windows)
			map=$(stat_of "$d" prefetch_mapped)
			skp=$(stat_of "$d" prefetch_skipped)
			io=$(stat_of "$d" io_exits) hl=$(stat_of "$d" halt_exits)
		fi
		seen="$(wc -c < "$log") $pf $io $hl"
		if [ "$seen" = "$last" ]; then quiet=$((quiet + 1)); else quiet=0; last=$seen; fi
		if grep -q '^@@L2DONE' "$log"; then
			:
		elif [ $quiet -ge 40 ] || [ $(($(now) - start)) -ge "$limit" ]; then
			echo "l2-stall: $who run $run: no guest output, page fault, I/O exit or halt for $quiet s, $(($(now) - start)) s in; last lines:"
			tail -n 3 "$log" | tr -d '\r' | sed -e 's/WARNING/warning/g' -e 's/^/l2-stall:   /'
			tr -d '\r' < "$log" | grep -iE 'apic|clocksource|tsc|timer|clockevent|calibrat|hpet|pit' |
				tail -n 20 | sed -e 's/WARNING/warning/g' -e 's/^/l2-stall: boot /'
			[ -n "$d" ] && diagnose "$d"
			monitor "$port"
			kill $qpid 2>/dev/null
			result=stall
			break
		fi
	done
	wait $qpid 2>/dev/null
	b_end=$(now_cs)
	secs=$(cs_to_s $((b_end - b_start)))
	tr -d '\r' < "$log" > "$log.clean"
	up=$(sed -n 's/^@@L2UP uptime=//p' "$log.clean")
	done_up=$(sed -n 's/^@@L2DONE uptime=//p' "$log.clean")
	sum=$(sed -n 's/^@@L2WORK ok .* sum=\([0-9a-f]*\).*/\1/p' "$log.clean")
	want=$(expect_sum "$work")
	if [ -z "$result" ]; then
		if [ -n "$sum" ] && [ "$sum" = "$want" ] && grep -q '^@@L2DONE' "$log.clean"; then
			result=ok
		elif [ -n "$sum" ] || grep -q '^@@L2WORK bad' "$log.clean"; then
			result=bad
		else
			result=fail
		fi
	fi
	echo "@@QEMU arm=$arm l1=$l1 run=$run result=$result secs=$secs l2up=${up:--} l2done=${done_up:--} pf_taken=${pf:--} prefetch_windows=${win:--} prefetch_mapped=${map:--} prefetch_skipped=${skp:--} exits=${ex:--} work=$work"
	case $result in
	ok) pass "$who run $run: the guest booted and its workload checked out (sum $sum; ${up}s to userspace, $pf guest faults, $map pages prefetched)" ;;
	bad) fail "$who run $run: bad: the workload read sum ${sum:--}, want $want ($(grep -m1 '^@@L2WORK' "$log.clean" | cut -c1-100))" ;;
	*) fail "$who run $run: $result (log: $(grep -v '^$' "$log.clean" | tail -n1 | cut -c1-100))"
	   # (the guest's own warnings, lower-cased: they are not the test VM's)
	   grep -m2 'XSAVE\|WARNING' "$log.clean" | sed -e 's/WARNING/warning/g' -e 's/^/  guest: /'
	   # Why the L1 QEMU went away without the workload's lines: its own
	   # last words (a guest reset under -no-reboot, an abort), and the
	   # guest's last console lines.
	   tail -n 5 "$log.qemu" 2>/dev/null | sed -e 's/WARNING/warning/g' -e 's/^/  qemu: /'
	   grep -v '^$' "$log.clean" | tail -n 5 | sed -e 's/WARNING/warning/g' -e 's/^/  guest tail: /'
	   ;;
	esac
}

# ---- a guest in "l2work grow <MiB> <steps>" (policy switches while it runs)
# Globals: glog (its serial log), qpid, vm (its debugfs directory), gstart
# (now at its start).

last_pass() { tr -d '\r' < $glog | sed -n 's/^@@L2PASS n=\([0-9]*\) .*/\1/p' | tail -n1; }

# wait_step <n>: until the guest has printed step <n>; 1 if it stopped
# or failed.
wait_step() {
	while [ $(($(now) - gstart)) -lt $limit ] && kill -0 $qpid 2>/dev/null; do
		l=$(last_pass)
		[ -n "$l" ] && [ "$l" -ge "$1" ] && return 0
		grep -q '^@@L2WORK' $glog && return 1
		sleep 0.5
	done
	return 1
}

# go <n>: lets a gated guest take <n> more steps (one byte each).
go() { i=0; while [ $i -lt "$1" ]; do printf g >&7; i=$((i + 1)); done; }

# grow_start <MiB> <steps>: the guest, gated (see l2work), up to its
# second step; sets vm.  It takes no step the rig has not let it take
# (go), so its phases never depend on how fast the machine runs it.
grow_start() {
	glog=/tmp/grow-l2.log
	gstart=$(now)
	gate=/tmp/grow-serial
	l2_qemu $glog "grow:$1:$2:gate"
	gate=
	while ! grep -q '^@@L2GATE' $glog; do
		[ $(($(now) - gstart)) -lt $limit ] && kill -0 $qpid 2>/dev/null &&
			! grep -q '^@@L2WORK' $glog || break
		sleep 0.5
	done
	# (planted "nogate": every step let go at once and taken before the
	# rig looks, as a fast machine did before the gate)
	if planted nogate; then go $2; wait_step $2; else go 2; fi
	if ! wait_step 2; then
		fail "the guest did not reach its second step ($(tr -d '\r' < $glog | tail -n1))"
		kill $qpid 2>/dev/null; wait $qpid
		return 1
	fi
	vm=$(vm_of $qpid)
}

counters() {
	echo "$(stat_of $vm prefetch_windows) $(stat_of $vm prefetch_mapped) $(stat_of $vm pf_taken)"
}
policy() { cut -d' ' -f1 "$vm/prefetch_policy" 2>/dev/null; }
# kp <kvm-prefetch args>: runs it, prints its output on one line.
kp() { kvm-prefetch "$@" > /tmp/kp.out 2>&1; r=$?; tr '\n' ' ' < /tmp/kp.out | cut -c1-200; return $r; }

# switch <want> <set args...>: "kvm-prefetch set --pid $qpid <set args>";
# it must exit 0 and the VM then have policy <want>.
switch() {
	want=$1
	shift
	out=$(kp set --pid $qpid "$@")
	rc=$?
	[ $rc = 0 ] && [ "$(policy)" = "$want" ] &&
		pass "set --pid $qpid $*: $(cat $vm/prefetch_policy) ($out)" ||
		fail "set --pid $qpid $* (want $want): exit $rc, the VM has '$(cat $vm/prefetch_policy)' ($out)"
}

# phase <name> <grow: 1|0>: the VM's counters over the guest's next 3
# steps; with 0 the windows must stay put, with 1 grow.
phase() {
	a=$(counters) s=$(last_pass)
	go 3
	wait_step $((s + 3)) || { fail "$1: the guest stopped before step $((s + 3)) ($(tr -d '\r' < $glog | tail -n1))"; return; }
	b=$(counters)
	set -- "$1" "$2" $a $b
	echo "@@QEMUCLI phase=$1 policy=$(policy) steps=$s..$(last_pass) windows=$3..$6 mapped=$4..$7 pf_taken=$5..$8"
	if [ "$2" = 1 ]; then
		[ "$6" -gt "$3" ] 2>/dev/null && pass "$1: windows grew ($3 -> $6) while the guest ran" ||
			fail "$1: windows did not grow ($3 -> $6)"
	else
		[ "$6" = "$3" ] && pass "$1: windows stayed at $3 while the guest ran ($5 -> $8 guest faults)" ||
			fail "$1: windows moved ($3 -> $6)"
	fi
	[ "$8" -gt "$5" ] 2>/dev/null || fail "$1: the guest took no fault ($5 -> $8): the test measures nothing"
}

# grow_finish <MiB> <steps>: waits for the guest to end; every step's
# sum must be the one "l2work expect" computes, and its final check ok.
grow_finish() {
	l=$(last_pass)
	go $(($2 - ${l:-0}))
	while kill -0 $qpid 2>/dev/null && [ $(($(now) - gstart)) -lt $limit ]; do sleep 1; done
	kill $qpid 2>/dev/null
	wait $qpid 2>/dev/null
	exec 7>&-
	n=0 bad=""
	tr -d '\r' < $glog | sed -n 's/^@@L2PASS n=\([0-9]*\) seed=\([0-9]*\) mib=[0-9]* sum=\([0-9a-f]*\).*/\1 \2 \3/p' > /tmp/grow-passes.txt
	while read -r k seed sum; do
		e=$(l2work expect "$1" "$seed")
		planted sum && e=$(echo "$e" | sed 's/.$/x/')
		if [ "$sum" = "$e" ]; then n=$((n + 1)); else bad="$bad step $k read $sum want $e;"; fi
	done < /tmp/grow-passes.txt
	if [ -z "$bad" ] && [ $n = "$2" ] && tr -d '\r' < $glog | grep -q '^@@L2WORK ok'; then
		pass "the guest ran on across the switches: $n steps, every sum as expected, its final check ok"
	else
		fail "the guest's data: $n of $2 sums ok;$bad last line: $(tr -d '\r' < $glog | grep '^@@' | tail -n1)"
	fi
}
