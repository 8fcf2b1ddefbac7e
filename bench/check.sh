#!/bin/sh
# bench/check.sh: how long `kdtrace -e -s` takes on a 50-line script that
# uses kernel types from BTF, beside bpftrace compiling an equivalent
# script without running it (--emit-elf, bpftrace 0.17 has no --dry-run),
# in the same run. Needs /sys/kernel/btf/vmlinux; bpftrace is optional.
#
#	sh bench/check.sh [runs]
set -eu
runs=${1:-20}
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/kdtrace" ./cmd/kdtrace

# The D script: 50 lines, eight kernel struct types reached from
# curthread and through casts.
cat > "$tmp/types.d" <<'D'
#pragma D option quiet

BEGIN
{
	this->t = curthread;
	this->pid = this->t->pid;
	this->tgid = this->t->tgid;
	this->comm = stringof(this->t->comm);
	this->prio = this->t->prio;
	this->cpu = this->t->on_cpu;
	this->parent = this->t->real_parent;
	this->ppid = this->parent->tgid;
	this->mm = this->t->mm;
	this->files = this->t->files;
	this->cred = this->t->cred;
	this->fs = this->t->fs;
	this->nsproxy = this->t->nsproxy;
	this->signal = this->t->signal;
}

BEGIN
/this->mm != NULL/
{
	this->start = this->mm->start_code;
	this->end = this->mm->end_code;
	this->brk = this->mm->brk;
	this->users = this->mm->mm_users.counter;
}

BEGIN
{
	this->f = (struct file *)arg0;
	this->mode = this->f->f_mode;
	this->flags = this->f->f_flags;
	this->pos = this->f->f_pos;
	this->inode = this->f->f_inode;
	this->ino = this->inode->i_ino;
	this->size = this->inode->i_size;
	this->sb = this->inode->i_sb;
	this->dev = this->sb->s_dev;
}

BEGIN
{
	this->sk = (struct sock *)arg1;
	this->family = this->sk->__sk_common.skc_family;
	this->dport = this->sk->__sk_common.skc_dport;
	this->skb = (struct sk_buff *)arg2;
	this->len = this->skb->len;
	@bytes[this->comm, this->family] = sum(this->len);
	@sizes = quantize(this->size);
	printf("%d %d %s %d\n", this->pid, this->ppid, this->comm, this->ino);
}
D

cat > "$tmp/types.bt" <<'BT'
BEGIN
{
	$t = (struct task_struct *)curtask;
	$pid = $t->pid; $tgid = $t->tgid; $comm = $t->comm; $prio = $t->prio;
	$cpu = $t->on_cpu; $parent = $t->real_parent; $ppid = $parent->tgid;
	$mm = $t->mm; $files = $t->files; $cred = $t->cred; $fs = $t->fs;
	$nsproxy = $t->nsproxy; $signal = $t->signal;
	if ($mm != 0) {
		$start = $mm->start_code; $end = $mm->end_code; $brk = $mm->brk;
		$users = $mm->mm_users.counter;
	}
	$f = (struct file *)0; $mode = $f->f_mode; $flags = $f->f_flags;
	$pos = $f->f_pos; $inode = $f->f_inode; $ino = $inode->i_ino;
	$size = $inode->i_size; $sb = $inode->i_sb; $dev = $sb->s_dev;
	$sk = (struct sock *)0; $family = $sk->__sk_common.skc_family;
	$dport = $sk->__sk_common.skc_dport; $skb = (struct sk_buff *)0;
	$len = $skb->len;
	@bytes[$comm, $family] = sum($len);
	@sizes = hist($size);
	printf("%d %d %s %d\n", $pid, $ppid, $comm, $ino);
}
BT

# median prints the median wall time in ms of running "$@" $runs times.
median() {
	i=0
	: > "$tmp/times"
	while [ $i -lt "$runs" ]; do
		s=$(date +%s%N)
		"$@" > /dev/null 2>&1 || { echo "failed: $*" >&2; "$@" >&2 || true; exit 1; }
		e=$(date +%s%N)
		echo $(( (e - s) / 1000 )) >> "$tmp/times"
		i=$((i + 1))
	done
	sort -n "$tmp/times" | awk '{ t[NR] = $1 } END { m = t[int((NR + 1) / 2)]; printf "%.2f", m / 1000 }'
}

k=$(median "$tmp/kdtrace" -e -s "$tmp/types.d")
echo "kdtrace -e -s (50 lines, BTF types): median ${k} ms over $runs runs"
if command -v bpftrace > /dev/null; then
	b=$(median bpftrace --emit-elf "$tmp/bt.elf" "$tmp/types.bt")
	echo "bpftrace --emit-elf (same types):    median ${b} ms over $runs runs"
	awk -v k="$k" -v b="$b" 'BEGIN { printf "ratio kdtrace/bpftrace: %.3f\n", k / b }'
fi
