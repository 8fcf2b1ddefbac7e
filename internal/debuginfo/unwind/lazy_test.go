package unwind

import (
	"cmp"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"testing"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/internal/gcctest"
	"github.com/kdtrace/kdtrace/internal/guest"
)

// Lookups read ORC in place and build the FDE index on first need.
// These tests check them against a full decode of the same tables, and
// count what a lookup decodes.

// orcFull is an ORC table decoded whole, as lookups read it before
// they read it in place: every entry, stable-sorted by address with the
// weak section terminators first among entries of one address.
type orcFull struct {
	ips  []uint64
	ents []orcEntry
	offs []int // of each entry in .orc_unwind
}

func decodeORCFull(ipData, entData []byte, base uint64, newLayout bool) orcFull {
	type pair struct {
		ip  uint64
		e   orcEntry
		off int
	}
	ps := make([]pair, len(ipData)/4)
	for i := range ps {
		p := &ps[i]
		p.ip = base + uint64(4*i) + uint64(int64(int32(binary.LittleEndian.Uint32(ipData[4*i:]))))
		p.off = 6 * i
		d := entData[6*i:]
		p.e = orcEntry{spOffset: int16(binary.LittleEndian.Uint16(d)), bpOffset: int16(binary.LittleEndian.Uint16(d[2:])),
			spReg: d[4] & 0x0f, bpReg: d[4] >> 4}
		switch t := d[5] & 7; {
		case !newLayout:
			p.e.typ, p.e.end = d[5]&3, d[5]&4 != 0
		case t == 0:
			p.e.typ = 0xff
		case t == 1:
			p.e.end = true
		default:
			p.e.typ = t - 2
		}
	}
	weak := func(e orcEntry) bool { return e.spReg == orcRegUndefined && !e.end }
	slices.SortStableFunc(ps, func(a, b pair) int {
		if c := cmp.Compare(a.ip, b.ip); c != 0 {
			return c
		}
		switch wa, wb := weak(a.e), weak(b.e); {
		case wa && !wb:
			return -1
		case wb && !wa:
			return 1
		}
		return 0
	})
	var f orcFull
	for _, p := range ps {
		f.ips, f.ents, f.offs = append(f.ips, p.ip), append(f.ents, p.e), append(f.offs, p.off)
	}
	return f
}

// checkORC compares the lookups of o at the first and last address of
// every entry with the full decode's rows, and returns how many
// addresses it checked.
func checkORC(t *testing.T, o *orcTable) int {
	t.Helper()
	full := decodeORCFull(o.ips, o.ents, o.base, o.newLayout)
	if len(full.ips) != o.len() {
		t.Fatalf("%d entries decoded, the table has %d", len(full.ips), o.len())
	}
	checked, bad := 0, 0
	for k, ip := range full.ips {
		hi := ^uint64(0)
		if k+1 < len(full.ips) {
			hi = full.ips[k+1]
		}
		if hi == ip {
			continue // a later entry of the same address wins
		}
		want, wantErr := orcRow(full.ents[k], full.offs[k], ip, hi)
		for _, pc := range []uint64{ip, hi - 1} {
			checked++
			before := o.decoded.Load()
			got, err := o.row(pc)
			if n := o.decoded.Load() - before; n != 1 {
				t.Errorf("%#x: %d entries decoded for one lookup", pc, n)
			}
			if !sameRow(want, got) || errString(err) != errString(wantErr) {
				if bad++; bad <= 10 {
					t.Errorf("%#x: lookup %v, full decode %v (-full +lookup):\n%s", pc, err, wantErr, gocmp.Diff(want, got))
				}
			}
		}
	}
	if bad > 10 {
		t.Errorf("%d more differ", bad-10)
	}
	if k := full.ips[0]; k > 0 {
		if _, err := o.row(k - 1); !errors.Is(err, ErrNoFrame) {
			t.Errorf("%#x, below the first entry: %v", k-1, err)
		}
	}
	return checked
}

// sameRow compares rows field by field, rules by their text: the vmlinux's
// comparisons are three quarters of a million.
func sameRow(a, b *Row) bool {
	if a == nil || b == nil {
		return a == b
	}
	if a.Lo != b.Lo || a.Hi != b.Hi || a.CFA.String() != b.CFA.String() || a.RA != b.RA || a.ArgsSize != b.ArgsSize ||
		a.Signal != b.Signal || a.Source != b.Source || len(a.Regs) != len(b.Regs) {
		return false
	}
	for r, ra := range a.Regs {
		if rb, ok := b.Regs[r]; !ok || ra.String() != rb.String() {
			return false
		}
	}
	return true
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestORCInPlace(t *testing.T) {
	t.Run("synthetic", func(t *testing.T) {
		// Out of order, with a weak terminator after the entry it
		// shares an address with, as a module's tables are.
		ents := []struct {
			ip uint64
			e  []byte
		}{
			{0x1010, orcEntryBytes(16, -16, orcRegBP, orcRegPrevSP, orcTypeCall, false, false)},
			{0x1001, orcEntryBytes(16, -16, orcRegSP, orcRegPrevSP, orcTypeCall, false, false)},
			{0x1000, orcEntryBytes(8, 0, orcRegSP, orcRegUndefined, orcTypeCall, false, false)},
			{0x1001, orcEntryBytes(0, 0, orcRegUndefined, orcRegUndefined, orcTypeCall, false, false)},
			{0x1020, orcEntryBytes(0, 0, orcRegUndefined, orcRegUndefined, orcTypeCall, true, false)},
		}
		const base = 0x5000
		var ips, entries []byte
		for i, e := range ents {
			ips = binary.LittleEndian.AppendUint32(ips, uint32(int32(int64(e.ip)-int64(base+4*i))))
			entries = append(entries, e.e...)
		}
		o, err := newORC(ips, entries, base, false)
		if err != nil {
			t.Fatal(err)
		}
		if n := checkORC(t, o); n != 8 {
			t.Errorf("%d addresses checked, want 8", n)
		}
		if o.order == nil {
			t.Error("unsorted entries were not sorted")
		}
	})
	t.Run("vmlinux", func(t *testing.T) {
		path, ok := guest.CachedDebug()
		if !ok {
			t.Skip("no vmlinux with ORC: set KDTRACE_VMLINUX")
		}
		if testing.Short() {
			t.Skip("short")
		}
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if f.orc == nil {
			t.Fatal("no ORC tables")
		}
		t.Logf("%d addresses checked", checkORC(t, f.orc))
		if f.orc.order != nil {
			t.Error("a vmlinux's sorted tables were sorted again")
		}
	})
	t.Run("module", func(t *testing.T) {
		path := os.Getenv("KDTRACE_MODULE")
		if path == "" {
			m, _ := filepath.Glob("/var/tmp/kdtrace-modules/lib/modules/*/kernel/fs/xfs/xfs.ko")
			if len(m) == 0 {
				t.Skip("no kernel module with ORC: set KDTRACE_MODULE")
			}
			path = m[0]
		}
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if f.orc == nil {
			t.Fatalf("%s: no ORC", path)
		}
		t.Logf("%d addresses checked", checkORC(t, f.orc))
	})
}

// TestFramesLazyKernel checks that a kernel's CFA comes from ORC alone,
// decoding one entry a lookup and no FDE, and that it is Row's CFA at
// every entry's address.
func TestFramesLazyKernel(t *testing.T) {
	path, ok := guest.CachedDebug()
	if !ok {
		t.Skip("no vmlinux with ORC: set KDTRACE_VMLINUX")
	}
	if testing.Short() {
		t.Skip("short")
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.secs) == 0 || f.orc == nil {
		t.Fatal("no .debug_frame or no ORC")
	}
	full := decodeORCFull(f.orc.ips, f.orc.ents, f.orc.base, f.orc.newLayout)
	// The first address of each entry, those with a rule first: a
	// lookup that finds none in ORC asks DWARF, which then indexes its
	// FDEs.
	var pcs []uint64
	ruled := 0
	for _, withRule := range []bool{true, false} {
		for k, ip := range full.ips {
			if k+1 < len(full.ips) && full.ips[k+1] == ip {
				continue
			}
			if _, err := orcRow(full.ents[k], 0, ip, ip+1); (err == nil) == withRule {
				pcs = append(pcs, ip)
			}
		}
		if withRule {
			ruled = len(pcs)
		}
	}
	cfas := make([]CFARule, len(pcs))
	errs := make([]error, len(pcs))
	for i, pc := range pcs {
		if i == ruled {
			if n := len(f.fdes); n != 0 {
				t.Errorf("%d FDEs indexed for the CFA at %d addresses ORC has a rule for", n, ruled)
			}
			if n := f.orc.decoded.Load(); n != int64(ruled) {
				t.Errorf("%d ORC entries decoded for %d lookups", n, ruled)
			}
		}
		cfas[i], errs[i] = f.CFA(pc)
	}
	fromDWARF := 0
	for i, pc := range pcs {
		r, err := f.Row(pc)
		switch {
		case errString(err) != errString(errs[i]):
			t.Fatalf("%#x: CFA's error %v, Row's %v", pc, errs[i], err)
		case err != nil:
		case r.CFA.String() != cfas[i].String():
			t.Errorf("%#x: CFA %v, Row's %v from %s", pc, cfas[i], r.CFA, r.Source)
		case r.Source != ".orc_unwind":
			fromDWARF++
		}
	}
	if len(f.fdes) == 0 {
		t.Error("Row built no FDE index")
	}
	t.Logf("%d addresses: the CFA is Row's; Row's from DWARF agreeing with ORC at %d", len(pcs), fromDWARF)
}

// TestFramesLazy checks that opening a program's frames reads no FDE,
// and that the first lookup indexes them all.
func TestFramesLazy(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the fixture's assembly is amd64's")
	}
	gcctest.Need(t, "gcc", "readelf")
	src, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(t.TempDir(), "cfi")
	gcctest.Run(t, "", "gcc", "-O2", "-g", "-o", prog, filepath.Join(src, "cfi.c"), filepath.Join(src, "cfi.s"))
	f, err := Open(prog)
	if err != nil {
		t.Fatal(err)
	}
	if f.fdes != nil {
		t.Fatalf("Open indexed %d FDEs", len(f.fdes))
	}
	want := 0
	for _, fdes := range readelfFrames(t, prog) {
		for _, d := range fdes {
			if d.hi > d.lo {
				want++
			}
		}
	}
	if _, err := f.CFA(0); !errors.Is(err, ErrNoFrame) {
		t.Errorf("CFA(0): %v", err)
	}
	if len(f.fdes) != want {
		t.Errorf("after a lookup: %d FDEs indexed, readelf prints %d", len(f.fdes), want)
	}
}

// TestFramesConcurrent looks up every FDE's rows from several
// goroutines at once on frames just opened, whose index the first
// lookup builds (or which search .eh_frame_hdr, for a program without
// .debug_frame), and compares them with one goroutine's.
func TestFramesConcurrent(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("the fixture's assembly is amd64's")
	}
	gcctest.Need(t, "gcc")
	src, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	withDebugFrame, ehOnly := filepath.Join(dir, "cfi"), filepath.Join(dir, "eh")
	gcctest.Run(t, "", "gcc", "-O2", "-g", "-o", withDebugFrame, filepath.Join(src, "cfi.c"), filepath.Join(src, "cfi.s"))
	gcctest.Run(t, "", "gcc", "-O2", "-g", "-o", ehOnly, filepath.Join(src, "cfi.c"))
	for _, prog := range []string{withDebugFrame, ehOnly} {
		want, err := Open(prog)
		if err != nil {
			t.Fatal(err)
		}
		want.hdr = nil
		want.index()
		f, err := Open(prog)
		if err != nil {
			t.Fatal(err)
		}
		if (f.hdr != nil) != (prog == ehOnly) {
			t.Fatalf("%s: .eh_frame_hdr read: %v", prog, f.hdr != nil)
		}
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for _, d := range want.fdes {
					for pc := d.lo; pc < d.hi; pc += max(1, (d.hi-d.lo)/16) {
						w, werr := want.Row(pc)
						g, gerr := f.Row(pc)
						if !sameRow(w, g) || errString(werr) != errString(gerr) {
							t.Errorf("%#x: %v, %v; one goroutine's %v, %v", pc, g, gerr, w, werr)
							return
						}
					}
				}
			})
		}
		wg.Wait()
	}
}

// TestFramesHdrLookups checks the lookups through .eh_frame_hdr against
// the index's at the first, middle and last address of every FDE and
// just past it, in programs built here and the system's libc and
// nodejs, and counts the FDEs a lookup decodes.
func TestFramesHdrLookups(t *testing.T) {
	src, err := filepath.Abs("testdata/cfi.c")
	if err != nil {
		t.Fatal(err)
	}
	type file struct {
		path  string
		built bool // a program built here, which must have .eh_frame_hdr
	}
	var files []file
	for _, cc := range []string{"gcc", "clang"} {
		if _, err := exec.LookPath(cc); err == nil {
			prog := filepath.Join(t.TempDir(), cc)
			gcctest.Run(t, "", cc, "-O2", "-g", "-o", prog, src)
			files = append(files, file{prog, true})
		}
	}
	for _, p := range []string{"/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/node"} {
		if _, err := os.Stat(p); err == nil && !testing.Short() {
			files = append(files, file{path: p})
		}
	}
	if len(files) == 0 {
		t.Skip("no gcc, clang, libc or nodejs")
	}
	for _, fl := range files {
		t.Run(filepath.Base(fl.path), func(t *testing.T) {
			f, err := Open(fl.path)
			if err != nil {
				t.Fatal(err)
			}
			if f.hdr == nil {
				if fl.built {
					t.Fatal("no .eh_frame_hdr read")
				}
				t.Skip("no .eh_frame_hdr read")
			}
			full, err := Open(fl.path)
			if err != nil {
				t.Fatal(err)
			}
			full.hdr = nil
			full.index()
			if len(full.errs) > 0 {
				t.Fatal(errors.Join(full.errs...))
			}
			step := max(1, len(full.fdes)/20000)
			checked, most := 0, int64(0)
			inside, insideDecoded := 0, int64(0) // lookups inside an FDE
			for i := 0; i < len(full.fdes); i += step {
				d := full.fdes[i]
				for j, pc := range []uint64{d.lo, d.lo + (d.hi-d.lo)/2, d.hi - 1, d.hi} {
					checked++
					before := f.hdr.decoded.Load()
					g, gerr := f.Row(pc)
					n := f.hdr.decoded.Load() - before
					most = max(most, n)
					if j < 3 {
						inside++
						insideDecoded += n
					}
					w, werr := full.Row(pc)
					if !sameRow(w, g) || errString(werr) != errString(gerr) {
						t.Fatalf("%#x: through .eh_frame_hdr %v, %v; the index's %v, %v", pc, g, gerr, w, werr)
					}
				}
			}
			if len(f.fdes) != 0 {
				t.Errorf("lookups through .eh_frame_hdr indexed %d FDEs", len(f.fdes))
			}
			// find looks 16 FDEs back, and at those of the 16th's
			// address; the FDE holding an address is the first.
			if most > 20 || float64(insideDecoded) > 1.01*float64(inside) {
				t.Errorf("a lookup decoded %d FDEs at most; %d lookups inside FDEs decoded %d", most, inside, insideDecoded)
			}
			t.Logf("%d of %d FDEs, %d addresses checked; %d FDEs decoded for %d lookups inside them, at most %d for one past them",
				len(full.fdes)/step, len(full.fdes), checked, insideDecoded, inside, most)
		})
	}
}
