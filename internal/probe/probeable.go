package probe

// probeable is the set of a running kernel's functions fbt can
// instrument: those ftrace traces (ksym.FilterFunctions), less the
// kprobe blacklist. ftrace's list leaves out what a kprobe at a
// function's entry or a BPF trampoline cannot reach: notrace functions,
// noinstr and entry code, and init code, which kallsyms and ftrace drop
// once it is freed after boot but BTF still describes. (A kernel built
// with CONFIG_KPROBE_EVENTS_ON_NOTRACE could kprobe a notrace function;
// distributions leave it off, and fbt keeps to what every kernel
// allows.)
type probeable struct {
	mods map[string]*funcList
}

func (p *probeable) has(module, fn string) bool {
	l := p.mods[module]
	if l == nil {
		return false
	}
	_, ok := l.lookup(fn)
	return ok
}
