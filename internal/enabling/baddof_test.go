package enabling_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kdtrace/kdtrace/dof"
	"github.com/kdtrace/kdtrace/internal/doftest"
	"github.com/kdtrace/kdtrace/internal/enabling"
)

// The dtrace test suite's baddof (cmd/baddof/baddof.c) compiles a D
// script, takes the first dofh_loadsz bytes of its DOF, and hands the
// kernel (DTRACEIOC_ENABLE) that DOF with each of its bits flipped in
// turn; then it flips 20 random bits at a time, and whenever the kernel
// takes the result, starts again from it. The kernel must never crash.
// These tests do the same to Load, which must never panic and must
// either take the DOF or refuse it with an *Error and a reason; and they
// check that every flip that makes the file malformed, rather than a
// different well-formed program, is refused.

// field is a part of a valid DOF file and what a flipped bit in it
// does.
type field struct {
	off, size uint64
	name      string
	// refuse tells, from the field's new value, whether the file is now
	// malformed and must be refused. Nil: the flip may give a valid
	// program (a string, an argument, DIF code, an ignored field).
	refuse func(v uint64) bool
}

func always(uint64) bool { return true }

// fieldMap describes every checked field of a valid file.
func fieldMap(t *testing.T, b []byte) []field {
	f, err := dof.Read(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := f.Header
	loadsz := h.LoadSz
	nsec := uint64(len(f.Sections))
	var fs []field
	add := func(off, size uint64, name string, refuse func(uint64) bool) {
		fs = append(fs, field{off, size, name, refuse})
	}
	add(0, 4, "magic", always)
	add(4, 1, "model", always)
	add(5, 1, "encoding", always)
	add(6, 1, "version", always)
	add(7, 1, "difvers", always)
	add(8, 1, "difireg", func(v uint64) bool { return v > 8 })
	add(9, 1, "diftreg", func(v uint64) bool { return v > 8 })
	add(10, 6, "ident pad", always)
	add(16, 4, "flags", always)
	add(24, 4, "secsize", func(v uint64) bool { return v%8 != 0 || v < 32 || h.SecOff+v*nsec > loadsz })
	add(32, 8, "secoff", func(v uint64) bool { return v%8 != 0 || v+32*nsec > loadsz })
	add(40, 8, "loadsz", always)

	// Sections that others refer to, and the type they are taken as.
	referenced := make(map[uint32]bool)
	inRange := func(v uint64) bool { return v < nsec }
	// index builds the rule of a field holding a section index that must
	// name a section of type t (any type if t is SectNone).
	index := func(t dof.SectType) func(uint64) bool {
		return func(v uint64) bool {
			return !inRange(v) || !f.Sections[v].Loaded() || (t != dof.SectNone && f.Sections[v].Type != t)
		}
	}
	strOff := func(strtab uint32) func(uint64) bool {
		return func(v uint64) bool { return v >= f.Sections[strtab].Size }
	}
	for i, s := range f.Sections {
		d := s.Offset
		switch s.Type {
		case dof.SectECBDesc:
			e := dof.DecodeECBDesc(f.Data(i))
			referenced[e.Probes] = true
			add(d, 4, "ECB probes", index(dof.SectProbeDesc))
			if e.Pred != dof.SecIdxNone {
				referenced[e.Pred] = true
				add(d+4, 4, "ECB predicate", index(dof.SectDIFOHdr))
			} else {
				add(d+4, 4, "ECB predicate", func(v uint64) bool { return v != dof.SecIdxNone && index(dof.SectDIFOHdr)(v) })
			}
			if e.Actions != dof.SecIdxNone {
				referenced[e.Actions] = true
				add(d+8, 4, "ECB actions", index(dof.SectActDesc))
			} else {
				add(d+8, 4, "ECB actions", func(v uint64) bool { return v != dof.SecIdxNone && index(dof.SectActDesc)(v) })
			}
		case dof.SectProbeDesc:
			p := dof.DecodeProbeDesc(f.Data(i))
			referenced[p.StrTab] = true
			add(d, 4, "probe strtab", index(dof.SectStrTab))
			for k, name := range []string{"provider", "module", "function", "name"} {
				add(d+4+4*uint64(k), 4, "probe "+name, strOff(p.StrTab))
			}
		case dof.SectActDesc:
			for o := uint64(0); o < s.Size; o += uint64(s.EntSize) {
				a := dof.DecodeActDesc(f.Data(i)[o:])
				if a.DIFO != dof.SecIdxNone {
					referenced[a.DIFO] = true
					add(d+o, 4, "action DIFO", index(dof.SectDIFOHdr))
				}
				if a.StrTab != dof.SecIdxNone {
					referenced[a.StrTab] = true
					add(d+o+4, 4, "action strtab", index(dof.SectStrTab))
					add(d+o+16, 8, "action format", strOff(a.StrTab))
				} else if a.Kind == dof.ActDIFExpr {
					add(d+o+4, 4, "action strtab", always)
				}
			}
		case dof.SectDIFOHdr:
			for o := uint64(dof.DIFTypeSize); o < s.Size; o += 4 {
				l := le.Uint32(f.Data(i)[o:])
				referenced[l] = true
				add(d+o, 4, "DIFO link", func(v uint64) bool { return !inRange(v) })
			}
		case dof.SectKRelHdr, dof.SectURelHdr:
			r := dof.DecodeRelHdr(f.Data(i))
			referenced[r.StrTab], referenced[r.RelSec], referenced[r.TgtSec] = true, true, true
			add(d, 4, "relocation strtab", index(dof.SectStrTab))
			add(d+4, 4, "relocation table", index(dof.SectRelTab))
			add(d+8, 4, "relocation target", index(dof.SectNone))
			tgt := f.Sections[r.TgtSec]
			rel := f.Sections[r.RelSec]
			for o := uint64(0); o < rel.Size; o += uint64(rel.EntSize) {
				at := rel.Offset + o
				add(at, 4, "relocation name", strOff(r.StrTab))
				add(at+4, 4, "relocation type", func(v uint64) bool { return v > 2 })
				add(at+8, 8, "relocation offset", func(v uint64) bool { return v%8 != 0 || v+8 > tgt.Size || v+8 < v })
			}
		case dof.SectOptDesc:
			for o := uint64(0); o < s.Size; o += uint64(s.EntSize) {
				opt := dof.DecodeOptDesc(f.Data(i)[o:])
				add(d+o, 4, "option", func(v uint64) bool { return v >= uint64(dof.OptMax) })
				add(d+o+4, 4, "option strtab", always)
				add(d+o+8, 8, "option value", func(v uint64) bool {
					return int64(v) == dof.OptUnset || (opt.Option != dof.OptCPU && int64(v) < 0)
				})
			}
		case dof.SectStrTab:
			add(d+s.Size-1, 1, "string table end", always)
		}
	}
	for i, s := range f.Sections {
		hdr := h.SecOff + uint64(i)*32
		if referenced[uint32(i)] {
			add(hdr, 4, fmt.Sprintf("section %d (%s) type", i, s.Type), always)
		}
		add(hdr+4, 4, fmt.Sprintf("section %d align", i), always)
		add(hdr+8, 1, fmt.Sprintf("section %d load flag", i), func(v uint64) bool { return v&1 == 0 })
		exact := map[dof.SectType]uint32{dof.SectActDesc: 32, dof.SectDIF: 4, dof.SectIntTab: 8, dof.SectVarTab: 20}
		if es, ok := exact[s.Type]; ok || (s.Type == dof.SectStrTab && i != 0) {
			add(hdr+12, 4, fmt.Sprintf("section %d entsize", i), func(v uint64) bool { return v != uint64(es) })
		}
		s := s
		add(hdr+16, 8, fmt.Sprintf("section %d offset", i), func(v uint64) bool {
			return v%uint64(s.Align) != 0 || v > loadsz || v+s.Size > loadsz
		})
		add(hdr+24, 8, fmt.Sprintf("section %d size", i), func(v uint64) bool {
			if v > loadsz || s.Offset+v > loadsz {
				return true
			}
			switch s.Type {
			case dof.SectActDesc, dof.SectDIF:
				return v == 0 || v%uint64(s.EntSize) != 0
			case dof.SectIntTab, dof.SectVarTab, dof.SectOptDesc:
				// An emptied integer table leaves setx out of range: that
				// is for the DIF checks.
				return v%uint64(s.EntSize) != 0
			case dof.SectProbeDesc, dof.SectECBDesc:
				return v < 24
			case dof.SectDIFOHdr:
				return v < 12 || v%4 != 0
			case dof.SectKRelHdr, dof.SectURelHdr:
				return v < 12
			case dof.SectStrTab:
				return v == 0 || b[s.Offset+v-1] != 0
			}
			return false
		})
	}
	return fs
}

func fieldAt(fs []field, off uint64) *field {
	for i := range fs {
		if off >= fs[i].off && off < fs[i].off+fs[i].size {
			return &fs[i]
		}
	}
	return nil
}

func readField(b []byte, fd *field) uint64 {
	var v uint64
	for k := fd.size; k > 0; k-- {
		v = v<<8 | uint64(b[fd.off+k-1])
	}
	return v
}

// loadChecked loads b and fails the test unless Load takes it or refuses
// it with an *Error and a reason.
func loadChecked(t *testing.T, b []byte, what string) (*enabling.Program, error) {
	t.Helper()
	var p *enabling.Program
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Fatalf("%s: Load panics: %v", what, r)
			}
		}()
		p, err = enabling.Load(b, nil)
	}()
	if err != nil {
		var ke *enabling.Error
		if !errors.As(err, &ke) || ke.Reason == "" {
			t.Fatalf("%s: refused without a reason: %v", what, err)
		}
		return nil, err
	}
	if p == nil {
		t.Fatalf("%s: no program and no error", what)
	}
	return p, nil
}

// baddofInput is a valid enabling to corrupt.
type baddofInput struct {
	name string
	dof  []byte
}

// baddofInputs returns the enablings to corrupt: the test programs, and
// the DOF kdtrace's compiler writes (-G) for a few of the test suite's
// scripts, kept in testdata/baddof.
func baddofInputs(t *testing.T) []baddofInput {
	var in []baddofInput
	for _, n := range doftest.Programs() {
		if !n.Helper {
			in = append(in, baddofInput{n.Name, write(t, n.Prog, nil)})
		}
	}
	files, err := filepath.Glob("testdata/baddof/*.dof")
	if err != nil || len(files) == 0 {
		t.Fatalf("testdata/baddof: %v", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := enabling.Load(b, nil); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		in = append(in, baddofInput{filepath.Base(f), b})
	}
	return in
}

// TestBaddofBitFlips flips each bit of the loadable part of each test
// program's DOF, as baddof's first loop does.
func TestBaddofBitFlips(t *testing.T) {
	total, refused := 0, 0
	reasons := make(map[string]int)
	taken := make(map[string]int)
	for _, n := range baddofInputs(t) {
		dofb := n.dof
		h := dof.DecodeHeader(dofb)
		buf := dofb[:h.LoadSz]
		fs := fieldMap(t, buf)
		for bit := 0; bit < len(buf)*8; bit++ {
			c := append([]byte(nil), buf...)
			c[bit/8] ^= 1 << (bit % 8)
			what := fmt.Sprintf("%s: bit %d (byte %#x)", n.name, bit, bit/8)
			_, err := loadChecked(t, c, what)
			total++
			if err != nil {
				refused++
				reasons[err.(*enabling.Error).Reason]++
				continue
			}
			fd := fieldAt(fs, uint64(bit/8))
			if fd != nil && fd.refuse != nil && fd.refuse(readField(c, fd)) {
				t.Errorf("%s: %s now %#x: malformed DOF taken", what, fd.name, readField(c, fd))
			}
			taken[flipPlace(buf, fd, uint64(bit/8))]++
		}
	}
	t.Logf("%d single-bit flips: %d refused, %d taken; %d distinct reasons", total, refused, total-refused, len(reasons))
	places := make([]string, 0, len(taken))
	for k := range taken {
		places = append(places, k)
	}
	slices.SortFunc(places, func(a, b string) int { return taken[b] - taken[a] })
	for _, k := range places {
		t.Logf("taken: %5d in %s", taken[k], k)
	}
}

// flipPlace names where a flipped bit fell, for the test's summary.
func flipPlace(b []byte, fd *field, off uint64) string {
	if fd != nil {
		name := strings.TrimLeft(strings.TrimPrefix(fd.name, "section "), "0123456789 ")
		return name
	}
	h := dof.DecodeHeader(b)
	if off < dof.HeaderSize {
		return fmt.Sprintf("header byte %d", off)
	}
	if off < h.SecOff+uint64(h.SecNum)*uint64(h.SecSize) {
		return fmt.Sprintf("section header byte %d", (off-h.SecOff)%uint64(h.SecSize))
	}
	f, _ := dof.Read(b, nil)
	for _, s := range f.Sections {
		if off >= s.Offset && off < s.Offset+s.Size {
			return "data of " + s.Type.String()
		}
	}
	return "padding"
}

// TestBaddofLeaps is baddof's second loop: flip 20 random bits; if the
// result is taken, it becomes the new base.
func TestBaddofLeaps(t *testing.T) {
	const leap = 20
	iters := 3000
	if testing.Short() {
		iters = 300
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range baddofInputs(t) {
		buf := append([]byte(nil), n.dof...)
		buf = buf[:dof.DecodeHeader(buf).LoadSz]
		bases := 0
		for it := 0; it < iters; it++ {
			var pos [leap]int
			var val [leap]byte
			for i := range pos {
				bit := rng.IntN(len(buf) * 8)
				pos[i], val[i] = bit/8, buf[bit/8]
				buf[bit/8] ^= 1 << (bit % 8)
			}
			what := fmt.Sprintf("%s: leap %d", n.name, it)
			p, err := loadChecked(t, buf, what)
			if err == nil {
				// A new valid base; loading it again gives the same
				// program.
				bases++
				again, err := loadChecked(t, append([]byte(nil), buf...), what)
				if err != nil {
					t.Fatalf("%s: taken once, refused again: %v", what, err)
				}
				if diff := cmp.Diff(p, again); diff != "" {
					t.Fatalf("%s: two loads differ:\n%s", what, diff)
				}
				continue
			}
			for i := leap - 1; i >= 0; i-- {
				buf[pos[i]] = val[i]
			}
		}
		t.Logf("%s: %d leaps, %d new bases", n.name, iters, bases)
	}
}
