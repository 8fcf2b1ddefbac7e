package dof_test

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/doftest"
)

func TestStructSizes(t *testing.T) {
	for _, c := range []struct {
		name string
		got  int
		want int
	}{
		{"dof_hdr_t", len((&dof.Header{}).Append(nil)), dof.HeaderSize},
		{"dof_sec_t", len((&dof.Sec{}).Append(nil)), dof.SecHeaderSize},
		{"dof_ecbdesc_t", len((&dof.ECBDesc{}).Append(nil)), dof.ECBDescSize},
		{"dof_probedesc_t", len((&dof.ProbeDesc{}).Append(nil)), dof.ProbeDescSize},
		{"dof_actdesc_t", len((&dof.ActDesc{}).Append(nil)), dof.ActDescSize},
		{"dtrace_diftype_t", len(dof.DIFType{}.Append(nil)), dof.DIFTypeSize},
		{"dtrace_difv_t", len((&dof.DIFVar{}).Append(nil)), dof.DIFVarSize},
		{"dof_relohdr_t", len((&dof.RelHdr{}).Append(nil)), dof.RelHdrSize},
		{"dof_relodesc_t", len((&dof.RelDesc{}).Append(nil)), dof.RelDescSize},
		{"dof_optdesc_t", len((&dof.OptDesc{}).Append(nil)), dof.OptDescSize},
		{"dof_provider_t", len((&dof.ProviderDesc{}).Append(nil)), dof.ProviderDescSize},
		{"dof_probe_t", len((&dof.ProbeEntry{}).Append(nil)), dof.ProbeEntrySize},
		{"dof_xlator_t", len((&dof.XlatorDesc{}).Append(nil)), dof.XlatorDescSize},
		{"dof_xlmember_t", len((&dof.XlMemberDesc{}).Append(nil)), dof.XlMemberDescSize},
		{"dof_xlref_t", len((&dof.XlRef{}).Append(nil)), dof.XlRefSize},
	} {
		if c.got != c.want {
			t.Errorf("%s: encoded in %d bytes, want %d", c.name, c.got, c.want)
		}
	}
}

func TestWireRoundTrip(t *testing.T) {
	h := dof.Header{Magic: [4]byte{1, 2, 3, 4}, Model: 5, Encoding: 6, Version: 7, DIFVers: 8,
		DIFIReg: 9, DIFTReg: 10, IdentPad: [6]byte{11, 12, 13, 14, 15, 16}, Flags: 17, HdrSize: 18,
		SecSize: 19, SecNum: 20, SecOff: 21, LoadSz: 22, FileSz: 23, Pad: 24}
	if got := dof.DecodeHeader(h.Append(nil)); got != h {
		t.Errorf("header: got %+v, want %+v", got, h)
	}
	s := dof.Sec{Type: 1, Align: 2, Flags: 3, EntSize: 4, Offset: 5, Size: 6}
	if got := dof.DecodeSec(s.Append(nil)); got != s {
		t.Errorf("sec: got %+v", got)
	}
	v := dof.DIFVar{Name: 1, ID: 2, Kind: 3, Scope: 4, Flags: 5, Type: dof.DIFType{6, 7, 8, 9, 10}}
	if got := dof.DecodeDIFVar(v.Append(nil)); got != v {
		t.Errorf("difv: got %+v", got)
	}
	p := dof.ProbeEntry{Addr: 1, Func: 2, Name: 3, NArgv: 4, XArgv: 5, ArgIdx: 6, OffIdx: 7, NArgc: 8,
		XArgc: 9, NOffs: 10, EnOffIdx: 11, NEnOffs: 12, Pad1: 13, Pad2: 14}
	if got := dof.DecodeProbeEntry(p.Append(nil)); got != p {
		t.Errorf("probe: got %+v", got)
	}
	pv := dof.ProviderDesc{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}
	if got := dof.DecodeProviderDesc(pv.Append(nil)); got != pv {
		t.Errorf("provider: got %+v", got)
	}
	pv.PrEnOffs = 0
	if got := dof.DecodeProviderDesc(pv.Append(nil)[:dof.ProviderDescV1Size]); got != pv {
		t.Errorf("provider v1: got %+v", got)
	}
}

// TestEmptyClauseBytes checks the whole file of the smallest enabling
// against offsets worked out by hand from dtrace_dof_create.
func TestEmptyClauseBytes(t *testing.T) {
	got, err := dof.Write(doftest.ByName("empty-clause"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var want []byte
	h := dof.Header{Magic: [4]byte{0x7f, 'D', 'O', 'F'}, Model: dof.ModelLP64, Encoding: dof.EncodeLSB,
		Version: 2, DIFVers: 2, DIFIReg: 8, DIFTReg: 8, HdrSize: 64, SecSize: 32, SecNum: 3,
		SecOff: 64, LoadSz: 228, FileSz: 228}
	want = h.Append(want)
	for _, s := range []dof.Sec{
		{Type: dof.SectStrTab, Align: 1, Flags: 1, Offset: 208, Size: 20},
		{Type: dof.SectProbeDesc, Align: 4, Flags: 1, EntSize: 24, Offset: 160, Size: 24},
		{Type: dof.SectECBDesc, Align: 8, Flags: 1, Offset: 184, Size: 24},
	} {
		want = s.Append(want)
	}
	pd := dof.ProbeDesc{StrTab: 0, Provider: 1, Mod: 0, Func: 9, Name: 14}
	want = pd.Append(want)
	ed := dof.ECBDesc{Probes: 1, Pred: dof.SecIdxNone, Actions: dof.SecIdxNone}
	want = ed.Append(want)
	want = append(want, "\x00syscall\x00read\x00entry\x00"...)
	if !bytes.Equal(got, want) {
		t.Errorf("got\n% x\nwant\n% x", got, want)
	}
}

func sectTypes(f *dof.File) []dof.SectType {
	var ts []dof.SectType
	for _, s := range f.Sections {
		ts = append(ts, s.Type)
	}
	return ts
}

func TestSectionOrder(t *testing.T) {
	const (
		S = dof.SectStrTab
		P = dof.SectProbeDesc
		D = dof.SectDIF
		I = dof.SectIntTab
		H = dof.SectDIFOHdr
		A = dof.SectActDesc
		E = dof.SectECBDesc
		V = dof.SectVarTab
		R = dof.SectRelTab
	)
	for _, c := range []struct {
		name string
		want []dof.SectType
	}{
		{"begin-trace", []dof.SectType{S, P, D, I, H, A, E}},
		{"printf", []dof.SectType{S, P, D, I, H, D, S, H, A, E}},
		{"predicate", []dof.SectType{S, P, D, I, S, V, H, D, S, V, H, A, E}},
		{"speculation", []dof.SectType{
			S,
			P, D, S, V, H, A, E,
			P, D, S, V, H, D, S, V, H, A, E,
			P, D, S, V, H, D, S, V, H, A, E}},
		{"relocations", []dof.SectType{S, P, D, I, S, H, R, dof.SectKRelHdr, A, E}},
		{"exit-options", []dof.SectType{S, P, D, I, H, A, E, dof.SectOptDesc}},
		{"usdt-provider", []dof.SectType{S, P, D, S, H, A, E,
			dof.SectProbes, dof.SectPrArgs, dof.SectPrOffs, dof.SectPrEnOffs, dof.SectProvider,
			R, dof.SectURelHdr}},
	} {
		b, err := dof.Write(doftest.ByName(c.name), nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		f, err := dof.Read(b, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if diff := cmp.Diff(c.want, sectTypes(f)); diff != "" {
			t.Errorf("%s: sections (-want +got):\n%s", c.name, diff)
		}
	}
}

// TestLayout checks the rules of dtrace_dof_create on every test
// program: the global string table is section 0 and ends the loadable
// part, loadable data is aligned and lies between the section headers
// and the string table, non-loadable data follows at a multiple of 8.
func TestLayout(t *testing.T) {
	opts := &dof.Options{Comments: "kdtrace 0.1", UTSName: bytes.Repeat([]byte{'u'}, 5*257)}
	for _, n := range doftest.Programs() {
		for _, o := range []*dof.Options{nil, opts} {
			b, err := dof.Write(n.Prog, o)
			if err != nil {
				t.Fatalf("%s: %v", n.Name, err)
			}
			f, err := dof.Read(b, nil)
			if err != nil {
				t.Fatalf("%s: %v", n.Name, err)
			}
			h := f.Header
			ssize := uint64(64 + 32*len(f.Sections))
			st := f.Sections[0]
			if st.Type != dof.SectStrTab || st.Align != 1 || !st.Loaded() || st.EntSize != 0 {
				t.Errorf("%s: section 0 is %+v", n.Name, st)
			}
			if st.Offset+st.Size != h.LoadSz || f.Data(0)[0] != 0 || f.Data(0)[st.Size-1] != 0 {
				t.Errorf("%s: string table [%d,+%d) does not end the loadable part (%d)", n.Name, st.Offset, st.Size, h.LoadSz)
			}
			if o == nil && (h.FileSz != h.LoadSz || uint64(len(b)) != h.FileSz) {
				t.Errorf("%s: loadsz %d filesz %d len %d", n.Name, h.LoadSz, h.FileSz, len(b))
			}
			if o != nil && h.FileSz != (h.LoadSz+7)&^7+uint64(len(opts.Comments)+1)+uint64(len(opts.UTSName)) {
				t.Errorf("%s: loadsz %d filesz %d", n.Name, h.LoadSz, h.FileSz)
			}
			if uint64(len(b)) != h.FileSz {
				t.Errorf("%s: %d bytes, filesz %d", n.Name, len(b), h.FileSz)
			}
			for i, s := range f.Sections[1:] {
				if s.Loaded() != s.Type.Loadable() {
					t.Errorf("%s: section %d (%s) flags %d", n.Name, i+1, s.Type, s.Flags)
				}
				if s.Offset%uint64(s.Align) != 0 {
					t.Errorf("%s: section %d (%s) at %d, align %d", n.Name, i+1, s.Type, s.Offset, s.Align)
				}
				if s.Loaded() && (s.Offset < ssize || s.Offset+s.Size > st.Offset) {
					t.Errorf("%s: loadable section %d (%s) at [%d,+%d)", n.Name, i+1, s.Type, s.Offset, s.Size)
				}
				if !s.Loaded() && s.Offset < h.LoadSz {
					t.Errorf("%s: non-loadable section %d (%s) at %d", n.Name, i+1, s.Type, s.Offset)
				}
			}
		}
	}
}

var equateEmpty = cmpopts.EquateEmpty()

func TestReadProgram(t *testing.T) {
	for _, n := range append(doftest.Programs(), doftest.Named{Name: "translators", Prog: translators()}) {
		b, err := dof.Write(n.Prog, &dof.Options{Comments: "x"})
		if err != nil {
			t.Fatalf("%s: %v", n.Name, err)
		}
		f, err := dof.Read(b, nil)
		if err != nil {
			t.Fatalf("%s: %v", n.Name, err)
		}
		got, err := f.Program()
		if err != nil {
			t.Fatalf("%s: %v", n.Name, err)
		}
		if diff := cmp.Diff(n.Prog, got, equateEmpty); diff != "" {
			t.Errorf("%s: Read(Write(p)) differs (-want +got):\n%s", n.Name, diff)
		}
		// Writing what was read gives the same bytes.
		again, err := dof.Write(got, &dof.Options{Comments: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, b) {
			t.Errorf("%s: Write(Read(Write(p))) differs from Write(p)", n.Name)
		}
	}
}

func translators() *dof.Program {
	return &dof.Program{
		Translators: []dof.Translator{
			{Members: []dof.XlMember{{Name: "pr_pid", Type: doftest.Int(4)}},
				Args: []string{"struct proc *"}, Type: "psinfo_t", Attr: dof.Attr{1, 2, 3}},
			{Export: true, Members: []dof.XlMember{
				{Name: "a", Type: doftest.Int(8), DIFO: doftest.Const(7, 8)},
				{Name: "b", Type: doftest.String(256), DIFO: doftest.Str("b")},
			}, Args: []string{"struct x *", "int"}, Type: "y_t"},
		},
		ECBs: []dof.ECB{{
			Probe: dof.ProbeSpec{Provider: "dtrace", Name: "BEGIN"},
			Actions: []dof.Action{{Kind: dof.ActDIFExpr, DIFO: &dof.DIFO{
				Ret:    doftest.Int(4),
				Code:   []uint32{78<<24 | 0<<8 | 1, doftest.Ret(1)},
				XlRefs: []dof.XlRef{{Xlator: 0, Member: 0, Argn: 0}},
			}}},
		}},
		Providers: []dof.Provider{{
			Name:    "p",
			Probes:  []dof.Probe{{Func: "f", Name: "n", Offs: []uint32{1}}},
			Exports: []int{1},
		}},
	}
}

func TestFuncNameLen(t *testing.T) {
	long := strings.Repeat("f", 150)
	p := &dof.Program{ECBs: []dof.ECB{{Probe: dof.ProbeSpec{Provider: "fbt", Function: long, Name: "entry"}}}}
	b, err := dof.Write(p, nil)
	if err != nil {
		t.Fatalf("150-byte function with FUNCNAMELEN 192: %v", err)
	}
	if _, err := dof.Write(p, &dof.Options{FuncNameLen: dof.FuncNameLenOld}); err == nil {
		t.Error("150-byte function with FUNCNAMELEN 128: no error")
	}
	f, err := dof.Read(b, &dof.Options{FuncNameLen: dof.FuncNameLenOld})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Program(); err == nil {
		t.Error("Read with FUNCNAMELEN 128 took a 150-byte function")
	}
	p.ECBs[0].Probe.Function = strings.Repeat("f", 191)
	if _, err := dof.Write(p, nil); err != nil {
		t.Errorf("191-byte function: %v", err)
	}
	p.ECBs[0].Probe.Function = strings.Repeat("f", 192)
	if _, err := dof.Write(p, nil); err == nil {
		t.Error("192-byte function: no error")
	}
}

func TestWriteRefuses(t *testing.T) {
	for name, p := range map[string]*dof.Program{
		"format and arg": {ECBs: []dof.ECB{{Actions: []dof.Action{
			{Kind: dof.ActPrintf, Format: "%d", Arg: 3, DIFO: doftest.Const(1, 4)}}}}},
		"relocations without integers": {ECBs: []dof.ECB{{Actions: []dof.Action{
			{Kind: dof.ActDIFExpr, DIFO: &dof.DIFO{Code: []uint32{doftest.Ret(0)},
				KRelo: []dof.RelDesc{{Type: dof.RelSetX}}}}}}}},
		"long provider": {ECBs: []dof.ECB{{Probe: dof.ProbeSpec{Provider: strings.Repeat("p", 64)}}}},
		"long name":     {ECBs: []dof.ECB{{Probe: dof.ProbeSpec{Name: strings.Repeat("n", 64)}}}},
		"NUL in module": {ECBs: []dof.ECB{{Probe: dof.ProbeSpec{Module: "a\x00b"}}}},
		"option range":  {Options: []dof.Option{{ID: dof.OptMax}}},
		"probe without offsets": {Providers: []dof.Provider{{Name: "p",
			Probes: []dof.Probe{{Func: "f", Name: "n"}}}}},
		"argument map": {Providers: []dof.Provider{{Name: "p",
			Probes: []dof.Probe{{Func: "f", Name: "n", Offs: []uint32{1}, XArgs: []string{"int"}}}}}},
		"export of an import": {Translators: []dof.Translator{{}},
			Providers: []dof.Provider{{Name: "p", Exports: []int{0}}}},
	} {
		if _, err := dof.Write(p, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	p := &dof.Program{Providers: []dof.Provider{{Name: "p",
		Probes: []dof.Probe{{Func: "f", Name: "n", EnOffs: []uint32{1}}}}}}
	if _, err := dof.Write(p, &dof.Options{Version: dof.Version1}); err == nil {
		t.Error("is-enabled offsets in DOF version 1: no error")
	}
}

func TestVersion1Provider(t *testing.T) {
	p := &dof.Program{Providers: []dof.Provider{{Name: "p",
		Probes: []dof.Probe{{Func: "f", Name: "n", Offs: []uint32{4}}}}}}
	b, err := dof.Write(p, &dof.Options{Version: dof.Version1})
	if err != nil {
		t.Fatal(err)
	}
	f, err := dof.Read(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range f.Sections {
		if s.Type == dof.SectProvider && s.Size != dof.ProviderDescV1Size {
			t.Errorf("version 1 provider of %d bytes", s.Size)
		}
	}
	got, err := f.Program()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, got, equateEmpty); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestOptionsDOF(t *testing.T) {
	opts := []dof.Option{{ID: dof.OptQuiet, Value: 1}, {ID: dof.OptCPU, Value: -1}}
	b, err := dof.OptionsDOF(opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 64+32+2*16 {
		t.Fatalf("%d bytes", len(b))
	}
	f, err := dof.Read(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []dof.Sec{{Type: dof.SectOptDesc, Align: 8, Flags: 1, EntSize: 16, Offset: 96, Size: 32}}
	if diff := cmp.Diff(want, f.Sections); diff != "" {
		t.Errorf("sections (-want +got):\n%s", diff)
	}
	if f.Header.LoadSz != 128 || f.Header.FileSz != 128 {
		t.Errorf("loadsz %d filesz %d", f.Header.LoadSz, f.Header.FileSz)
	}
	if v := binary.LittleEndian.Uint64(b[96+16+8:]); int64(v) != -1 {
		t.Errorf("cpu option value %#x", v)
	}
	if d := dof.DecodeOptDesc(b[96:]); d.StrTab != dof.SecIdxNone {
		t.Errorf("option strtab %#x", d.StrTab)
	}
}

func TestReadRefuses(t *testing.T) {
	b, err := dof.Write(doftest.ByName("begin-trace"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, mut := range map[string]func([]byte) []byte{
		"short":      func(b []byte) []byte { return b[:63] },
		"magic":      func(b []byte) []byte { b[1] = 'd'; return b },
		"big-endian": func(b []byte) []byte { b[5] = 2; return b },
		"secnum":     func(b []byte) []byte { b[28] = 0xff; return b },
		"secsize":    func(b []byte) []byte { b[24] = 16; return b },
		"sec beyond": func(b []byte) []byte { return b[:len(b)-1] },
	} {
		c := mut(bytes.Clone(b))
		if _, err := dof.Read(c, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestActKind(t *testing.T) {
	for _, c := range []struct {
		k                                  dof.ActKind
		agg, destructive, spec, printflike bool
		name                               string
	}{
		{dof.ActPrintf, false, false, false, true, "PRINTF"},
		{dof.ActSystem, false, true, false, true, "SYSTEM"},
		{dof.ActPanic, false, true, false, false, "PANIC"},
		{dof.ActCommit, false, false, true, false, "COMMIT"},
		{dof.AggLLQuantize, true, false, false, false, "LLQUANTIZE"},
		{dof.ActKind(0x999), false, false, false, false, "ACT(0x999)"},
	} {
		if c.k.IsAgg() != c.agg || c.k.IsDestructive() != c.destructive ||
			c.k.IsSpeculative() != c.spec || c.k.IsPrintfLike() != c.printflike || c.k.String() != c.name {
			t.Errorf("%v: wrong class", c.k)
		}
	}
	base, step, levels := dof.LQuantizeParams(dof.LQuantizeArg(-10, 5, 20))
	if base != -10 || step != 5 || levels != 20 {
		t.Errorf("lquantize: %d %d %d", base, step, levels)
	}
	f, l, h, n := dof.LLQuantizeParams(dof.LLQuantizeArg(10, 0, 6, 20))
	if f != 10 || l != 0 || h != 6 || n != 20 {
		t.Errorf("llquantize: %d %d %d %d", f, l, h, n)
	}
	if dof.OptAggZoom.String() != "aggzoom" || dof.SectPrEnOffs.String() != "PRENOFFS" {
		t.Error("names")
	}
}
