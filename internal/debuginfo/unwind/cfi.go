package unwind

import (
	"cmp"
	"debug/elf"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/kdtrace/kdtrace/internal/debuginfo/dwarfexpr"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/dwarfread"
	"github.com/kdtrace/kdtrace/internal/debuginfo/internal/elffile"
)

// CFARule says how to compute the CFA: the value of register Reg plus
// Offset, or, when Expr is not empty (DW_CFA_def_cfa_expression; Reg is
// then -1), the value of Expr, evaluated with an empty stack. Reg is a
// DWARF register number: on amd64 7 is rsp and 6 rbp.
type CFARule struct {
	Reg    int
	Offset int64
	Expr   dwarfexpr.Expr
}

func (r CFARule) String() string {
	if len(r.Expr) > 0 {
		return "exp(" + r.Expr.String() + ")"
	}
	return fmt.Sprintf("r%d%+d", r.Reg, r.Offset)
}

// ruleKind is how a register of the caller is recovered.
type ruleKind uint8

// The register rules of DWARF 5, §6.4.1.
const (
	ruleUndefined     ruleKind = iota // not recoverable
	RuleSameValue                     // unchanged from the caller
	RuleOffset                        // saved at CFA+Offset
	ruleValOffset                     // the value is CFA+Offset
	ruleRegister                      // saved in register Reg
	ruleExpression                    // saved at the address Expr computes, the CFA pushed first
	ruleValExpression                 // the value is what Expr computes, the CFA pushed first
)

// rule is the rule of one register.
type rule struct {
	Kind   ruleKind
	Reg    int
	Offset int64
	Expr   dwarfexpr.Expr
}

func (r rule) String() string {
	switch r.Kind {
	case RuleSameValue:
		return "s"
	case RuleOffset:
		return fmt.Sprintf("c%+d", r.Offset)
	case ruleValOffset:
		return fmt.Sprintf("v%+d", r.Offset)
	case ruleRegister:
		return fmt.Sprintf("r%d", r.Reg)
	case ruleExpression:
		return "exp(" + r.Expr.String() + ")"
	case ruleValExpression:
		return "vexp(" + r.Expr.String() + ")"
	}
	return "u"
}

// Row is the call frame information at one address.
type Row struct {
	// Lo and Hi bound the addresses where the row holds: from the
	// instruction that set it up to the next change.
	Lo, Hi uint64
	CFA    CFARule
	// Regs holds the registers the table gives a rule for. A register
	// it does not name keeps the ABI's default: on amd64 the
	// callee-saved registers keep their value, the others are lost.
	Regs map[int]rule
	// RA is the register number of the return address: 16 on amd64.
	RA int
	// ArgsSize is DW_CFA_GNU_args_size: bytes of arguments pushed for a
	// call at this address.
	ArgsSize uint64
	// Signal reports a signal frame (augmentation 'S'; ORC's regs
	// frames): its return address is not after a call.
	Signal bool
	// Source is the table the row came from: ".debug_frame",
	// ".eh_frame" or ".orc_unwind".
	Source string
}

// ErrNoFrame is returned when no call frame information covers an
// address.
var ErrNoFrame = errors.New("no call frame information covers the address")

// cfiError reports damaged call frame information: an entry of a
// section that cannot be decoded.
type cfiError struct {
	Section string // ".eh_frame", ".debug_frame", ".orc_unwind"
	Offset  int    // of the entry in the section
	Entry   string // "CIE", "FDE", "entry"
	Err     error
}

func (e *cfiError) Error() string {
	return fmt.Sprintf("%s: damaged %s at offset %#x: %v", e.Section, e.Entry, e.Offset, e.Err)
}

func (e *cfiError) Unwrap() error { return e.Err }

// Frames is the call frame information of one image. It reads its
// files where they are mapped, and builds the index of the frame
// descriptions on the first lookup that needs it (a kernel's CFA is
// ORC's, and a program's FDEs are found through .eh_frame_hdr, which
// need none). It needs no Close: the files are closed when nothing
// uses them any more. It may be used from several goroutines.
type Frames struct {
	path string
	secs []*cfiSection // .debug_frame, then .eh_frame: the first covering an address wins
	orc  *orcTable
	hdr  *ehHdr // of .eh_frame when it is the only section

	once sync.Once
	fdes []fdeRef // of all sections, sorted by lo; ties keep secs' order
	errs []error  // damaged entries met while indexing
}

// files are the open files whose mappings the tables read. A cleanup
// closes them when the last table that holds them goes.
type files struct {
	efs []*elffile.File
}

func openFiles() *files { return &files{} }

// open opens the ELF file at path into fs.
func (fs *files) open(path string) (*elffile.File, error) {
	ef, err := elffile.Open(path)
	if err == nil {
		fs.efs = append(fs.efs, ef)
	}
	return ef, err
}

// close closes the files now, for an error.
func (fs *files) close() {
	closeAll(fs.efs)
}

// release leaves the files to be closed by a cleanup once unreachable.
func (fs *files) release() {
	runtime.AddCleanup(fs, closeAll, fs.efs)
}

func closeAll(efs []*elffile.File) {
	for _, ef := range efs {
		ef.Close()
	}
}

// cfiSection is one .eh_frame or .debug_frame.
type cfiSection struct {
	name string
	// data is the section's contents, where the file is mapped (or
	// decompressed, or relocated). Rows keep parts of the instructions
	// (the blocks of expressions): entry copies them.
	data  []byte
	files *files // which data may be in
	eh    bool   // .eh_frame's format: CIE id 0, CIE pointers relative, pointer encodings
	addr  uint64 // the section's address, the base of pcrel pointers
	// addrSize is the size of an address: the ELF class's, or a
	// version 4 CIE's.
	addrSize int
	// The bases of textrel and datarel pointers: .text and .got.
	text, got uint64
	// read reads the image's contents at an address, for indirect
	// pointers.
	read func(addr uint64, n int) ([]byte, bool)
}

// cie is a common information entry, decoded.
type cie struct {
	off       int
	version   uint8
	aug       string
	addrSize  int
	codeAlign uint64
	dataAlign int64
	ra        int
	fdeEnc    uint8 // DW_EH_PE_* of FDE addresses
	hasAugLen bool  // 'z': FDEs carry augmentation data, with its length
	signal    bool
	ins       []byte // the initial instructions
}

// fde is a frame description entry, decoded.
type fde struct {
	lo, hi uint64
	sec    *cfiSection
	cie    *cie
	off    int    // of the entry
	ins    []byte // the instructions
	insAt  int    // their offset in the section
}

// fdeRef is an FDE of the index: where it is, to decode it again when a
// lookup needs its rows. It holds no pointers, so that the index of a
// kernel's 50,000 FDEs grows and sorts without the collector's write
// barriers, which took half its time.
type fdeRef struct {
	lo, hi   uint64
	off      uint32 // of the entry in its section
	cie      uint32 // of its CIE
	ins, end uint32 // of its instructions
	rank     uint32 // of its section in Frames.secs
}

// Open reads the call frame information of the ELF file at path.
func Open(path string) (*Frames, error) {
	return OpenImage(path, "")
}

// OpenImage reads an image's call frame information: .debug_frame from
// its separate debug file (debug; "" or the image itself when it has
// none) or itself, .eh_frame and ORC from the image (a separate debug
// file keeps only empty copies of those). Each call reads the files
// again: callers keep the result.
func OpenImage(image, debug string) (*Frames, error) {
	fs := openFiles()
	f, err := openImage(fs, image, debug)
	if err != nil {
		fs.close()
		return nil, err
	}
	fs.release()
	return f, nil
}

func openImage(fs *files, image, debug string) (*Frames, error) {
	ef, err := fs.open(image)
	if err != nil {
		return nil, err
	}
	f := &Frames{path: image}
	if debug != "" && debug != image {
		dbg, err := fs.open(debug)
		if err != nil {
			return nil, err
		}
		if err := f.load(fs, dbg, false); err != nil {
			return nil, err
		}
	}
	if err := f.load(fs, ef, true); err != nil {
		return nil, err
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	if len(f.secs) == 1 && f.secs[0].eh {
		f.hdr = loadHdr(ef, f.secs[0])
	}
	return f, nil
}

// check reports a file without any call frame information.
func (f *Frames) check() error {
	if len(f.secs) == 0 && f.orc == nil {
		return fmt.Errorf("%s: no call frame information (.debug_frame, .eh_frame or ORC)", f.path)
	}
	return nil
}

// load adds the file's .debug_frame and, when runtime is set, its
// .eh_frame and ORC tables. A section already loaded from another file
// is not read again.
func (f *Frames) load(fs *files, ef *elffile.File, runtime bool) error {
	var text, got uint64
	for i, s := range ef.F.Sections {
		switch s.Name {
		case ".text":
			text = ef.Addrs[i]
		case ".got":
			got = ef.Addrs[i]
		}
	}
	read := func(addr uint64, n int) ([]byte, bool) {
		for i, s := range ef.F.Sections {
			lo := ef.Addrs[i]
			if s.Flags&elf.SHF_ALLOC == 0 || s.Type == elf.SHT_NOBITS || addr < lo || addr-lo >= s.Size || uint64(n) > s.Size-(addr-lo) {
				continue
			}
			d, err := ef.Data(s)
			if err != nil || addr-lo+uint64(n) > uint64(len(d)) {
				return nil, false
			}
			return d[addr-lo : addr-lo+uint64(n)], true
		}
		return nil, false
	}
	names := []string{".debug_frame", ".zdebug_frame"}
	if runtime {
		names = append(names, ".eh_frame")
	}
	for i, s := range ef.F.Sections {
		if !slices.Contains(names, s.Name) || s.Type == elf.SHT_NOBITS || s.Size == 0 {
			continue
		}
		name := strings.Replace(s.Name, ".zdebug", ".debug", 1)
		if slices.ContainsFunc(f.secs, func(c *cfiSection) bool { return c.name == name }) {
			continue
		}
		d, err := ef.Data(s)
		if err != nil {
			return fmt.Errorf("%s: %w", ef.Path, err)
		}
		if ef.F.Type == elf.ET_REL {
			if d, err = ef.Relocate(i, d); err != nil {
				return fmt.Errorf("%s: relocating %s: %w", ef.Path, s.Name, err)
			}
		}
		cs := &cfiSection{name: name, data: d, files: fs, eh: name == ".eh_frame",
			addr: ef.Addrs[i], addrSize: 8, text: text, got: got}
		if ef.F.Class == elf.ELFCLASS32 {
			cs.addrSize = 4
		}
		if cs.eh {
			// Indirect pointers read the image as it is on disk: what
			// the dynamic linker writes there is not known here.
			cs.read = read
		}
		f.secs = append(f.secs, cs)
	}
	// .debug_frame is searched first: it is the compiler's full
	// description, where .eh_frame may be trimmed to what unwinding needs.
	slices.SortStableFunc(f.secs, func(a, b *cfiSection) int {
		if a.eh == b.eh {
			return 0
		}
		if b.eh {
			return -1
		}
		return 1
	})
	if runtime && f.orc == nil {
		o, err := loadORC(fs, ef)
		if err != nil {
			return err
		}
		f.orc = o
	}
	return nil
}

// index builds the sorted index of FDEs, once.
func (f *Frames) index() {
	f.once.Do(func() {
		for i, s := range f.secs {
			if err := s.scan(&f.fdes, i); err != nil {
				f.errs = append(f.errs, err)
			}
		}
		f.fdes = sortFDEs(f.fdes)
	})
}

// sortFDEs sorts the FDEs by address, those of one address keeping the
// order they were found in (by section, then offset). It sorts their
// addresses and places, then moves the entries once: three times faster
// than sorting the entries.
func sortFDEs(fdes []fdeRef) []fdeRef {
	type key struct {
		lo uint64
		i  uint32
	}
	keys := make([]key, len(fdes))
	for i, d := range fdes {
		keys[i] = key{d.lo, uint32(i)}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if c := cmp.Compare(a.lo, b.lo); c != 0 {
			return c
		}
		return cmp.Compare(a.i, b.i)
	})
	sorted := make([]fdeRef, len(fdes))
	for i, k := range keys {
		sorted[i] = fdes[k.i]
	}
	return sorted
}

// Row returns the call frame information at pc, an address of the image
// as its symbols give it (a kernel module's as the package places its
// sections).
//
// Where an image has both ORC and DWARF's tables (a Linux kernel or
// module), ORC decides the CFA: objtool checks it at every instruction
// of the final code, including inline assembly that switches stacks and
// the alternatives patched in at boot, which the compiler's tables do
// not know of. DWARF's row, which has the rules of the callee-saved
// registers, is returned narrowed to ORC's range when the two agree.
func (f *Frames) Row(pc uint64) (*Row, error) {
	wrap := func(err error) error { return fmt.Errorf("%s: %#x: %w", f.path, pc, err) }
	var dw *Row
	var dwErr error
	if r := f.find(pc); r != nil {
		var d *fde
		if d, dwErr = f.entry(r); dwErr == nil {
			dw, dwErr = d.row(pc)
		}
	}
	if f.orc != nil {
		o, err := f.orc.row(pc)
		switch {
		case err == nil && dw != nil && sameCFA(dw.CFA, o.CFA):
			dw.Lo, dw.Hi = max(dw.Lo, o.Lo), min(dw.Hi, o.Hi)
			return dw, nil
		case err == nil:
			return o, nil
		case dw == nil && dwErr == nil:
			return nil, wrap(err)
		}
	}
	if dwErr != nil {
		return nil, wrap(dwErr)
	}
	if dw != nil {
		return dw, nil
	}
	err := wrap(ErrNoFrame)
	if len(f.errs) > 0 {
		err = fmt.Errorf("%w (%w)", err, errors.Join(f.errs...))
	}
	return nil, err
}

func sameCFA(a, b CFARule) bool {
	if len(a.Expr) > 0 || len(b.Expr) > 0 {
		return a.Expr.String() == b.Expr.String()
	}
	return a.Reg == b.Reg && a.Offset == b.Offset
}

// CFA returns the rule of the canonical frame address at pc: Row's.
// Where ORC has a rule for pc, that is it, and DWARF's tables are not
// read.
func (f *Frames) CFA(pc uint64) (CFARule, error) {
	if f.orc != nil {
		if o, err := f.orc.row(pc); err == nil {
			return o.CFA, nil
		}
	}
	r, err := f.Row(pc)
	if err != nil {
		return CFARule{}, err
	}
	return r.CFA, nil
}

// find returns the FDE covering pc, through .eh_frame_hdr where the
// image has it, else through the index.
func (f *Frames) find(pc uint64) *fdeRef {
	if f.hdr != nil {
		return f.findHdr(pc)
	}
	f.index()
	return findIn(f.fdes, pc)
}

// findIn returns the FDE of fdes, sorted, covering pc: of those starting
// at or below it, the nearest that reaches past it, in section order
// among those starting at the same address. FDEs rarely overlap, so the
// search back is short: 16 entries, and those starting where the last
// does.
func findIn(fdes []fdeRef, pc uint64) *fdeRef {
	i := sort.Search(len(fdes), func(i int) bool { return fdes[i].lo > pc })
	for j := i - 1; j >= 0 && j >= i-16; j-- {
		k := j
		for k > 0 && fdes[k-1].lo == fdes[j].lo {
			k--
		}
		for m := k; m <= j; m++ {
			if pc < fdes[m].hi {
				return &fdes[m]
			}
		}
		j = k
	}
	return nil
}

// ref returns where d is, in the section of rank rank.
func (d *fde) ref(rank int) fdeRef {
	return fdeRef{lo: d.lo, hi: d.hi, off: uint32(d.off), cie: uint32(d.cie.off),
		ins: uint32(d.insAt), end: uint32(d.insAt + len(d.ins)), rank: uint32(rank)}
}

// entry decodes the FDE r again, as the index found it.
func (f *Frames) entry(r *fdeRef) (*fde, error) {
	s := f.secs[r.rank]
	c, err := s.decodeCIE(int(r.cie))
	if err != nil {
		return nil, &cfiError{s.name, int(r.cie), "CIE", err} // decoded when indexed: no error then
	}
	// Rows keep parts of the instructions, which are where the file
	// is mapped.
	c.ins = slices.Clone(c.ins)
	d := &fde{lo: r.lo, hi: r.hi, sec: s, cie: c, off: int(r.off), ins: slices.Clone(s.data[r.ins:r.end]), insAt: int(r.ins)}
	runtime.KeepAlive(s.files)
	return d, nil
}

// Pointer encodings, DW_EH_PE_*.
const (
	peAbsptr   = 0x00
	peUleb128  = 0x01
	peUdata2   = 0x02
	peUdata4   = 0x03
	peUdata8   = 0x04
	peSleb128  = 0x09
	peSdata2   = 0x0a
	peSdata4   = 0x0b
	peSdata8   = 0x0c
	pePcrel    = 0x10
	peTextrel  = 0x20
	peDatarel  = 0x30
	peFuncrel  = 0x40
	peAligned  = 0x50
	peIndirect = 0x80
	peOmit     = 0xff
)

// pointer reads a pointer of encoding enc at the cursor. Its value
// alone (enc&0x0f) when rel is unset, for address ranges.
func (s *cfiSection) pointer(b *dwarfread.Buf, enc uint8, addrSize int, rel bool) (uint64, error) {
	if enc == peOmit {
		return 0, nil
	}
	at := s.addr + uint64(b.Pos)
	var v uint64
	if enc&0x70 == peAligned {
		if a := uint64(addrSize); a > 0 {
			b.Skip((a - (s.addr+uint64(b.Pos))%a) % a)
		}
		v = b.Addr(addrSize)
	} else {
		switch enc & 0x0f {
		case peAbsptr:
			v = b.Addr(addrSize)
		case peUleb128:
			v = b.Uleb()
		case peUdata2:
			v = uint64(b.U16())
		case peUdata4:
			v = uint64(b.U32())
		case peUdata8:
			v = b.U64()
		case peSleb128:
			v = uint64(b.Sleb())
		case peSdata2:
			v = uint64(int64(int16(b.U16())))
		case peSdata4:
			v = uint64(int64(int32(b.U32())))
		case peSdata8:
			v = b.U64()
		default:
			return 0, fmt.Errorf("unknown pointer encoding %#x", enc)
		}
	}
	if b.Err != nil {
		return 0, b.Err
	}
	if !rel {
		return v, nil
	}
	switch enc & 0x70 {
	case peAbsptr, peAligned:
	case pePcrel:
		v += at
	case peTextrel:
		v += s.text
	case peDatarel:
		v += s.got
	case peFuncrel:
		return 0, fmt.Errorf("pointer encoding %#x is relative to a function", enc)
	default:
		return 0, fmt.Errorf("unknown pointer encoding %#x", enc)
	}
	if addrSize == 4 {
		v = uint64(uint32(v))
	}
	if enc&peIndirect != 0 {
		var p []byte
		ok := false
		if s.read != nil {
			p, ok = s.read(v, addrSize)
		}
		if !ok {
			return 0, fmt.Errorf("indirect pointer to %#x: no contents in the file", v)
		}
		pb := dwarfread.Buf{Data: p}
		v = pb.Addr(addrSize)
	}
	return v, nil
}

// scan walks the section, decoding its CIEs and adding its FDEs to out.
// A damaged FDE is skipped; a damaged length stops the walk, since the
// next entry cannot be found. The errors are the first few met, and
// how many more there were.
func (s *cfiSection) scan(out *[]fdeRef, rank int) error {
	cies := map[int]cieResult{}
	var errs []error
	more := 0
	fail := func(err error) {
		if len(errs) < 4 {
			errs = append(errs, err)
		} else {
			more++
		}
	}
	done := func() error {
		if more > 0 {
			errs = append(errs, fmt.Errorf("%s: %d more damaged entries", s.name, more))
		}
		return errors.Join(errs...)
	}
	if uint64(len(s.data)) > math.MaxUint32 {
		return &cfiError{s.name, 0, "section", fmt.Errorf("%d bytes: more than the index's 4 GB", len(s.data))}
	}
	// The entries are counted first: growing the index as they were
	// decoded copied it a dozen times.
	n := 0
	for pos := 0; pos < len(s.data); n++ {
		b := dwarfread.Buf{Data: s.data, Pos: pos}
		l, _ := b.UnitLength()
		if b.Err != nil || l > uint64(len(s.data)-b.Pos) {
			break
		}
		pos = b.Pos + int(l)
	}
	*out = slices.Grow(*out, n)
	for pos := 0; pos < len(s.data); {
		b := dwarfread.Buf{Data: s.data, Pos: pos}
		n, dwarf64 := b.UnitLength()
		if b.Err != nil {
			fail(&cfiError{s.name, pos, "entry", b.Err})
			return done()
		}
		if n == 0 {
			if s.eh {
				break // the terminator
			}
			pos = b.Pos
			continue
		}
		if n > uint64(len(s.data)-b.Pos) {
			fail(&cfiError{s.name, pos, "entry", fmt.Errorf("length %#x runs past the end of the section", n)})
			return done()
		}
		end := b.Pos + int(n)
		e := dwarfread.Buf{Data: s.data[:end], Pos: b.Pos}
		idAt := e.Pos
		id := e.Offset(dwarf64)
		switch {
		case e.Err != nil:
			fail(&cfiError{s.name, pos, "entry", e.Err})
		case s.isCIE(id, dwarf64):
			if _, seen := cies[pos]; seen {
				break // decoded for an earlier FDE, its error reported then
			}
			if _, err := s.cie(cies, pos); err != nil {
				fail(err)
			}
		default:
			d, err := s.fde(cies, pos, &e, idAt, id)
			if err != nil {
				fail(err)
			} else if d.hi > d.lo {
				*out = append(*out, d.ref(rank))
			}
		}
		pos = end
	}
	return done()
}

func (s *cfiSection) isCIE(id uint64, dwarf64 bool) bool {
	if s.eh {
		return id == 0
	}
	if dwarf64 {
		return id == ^uint64(0)
	}
	return id == 0xffffffff
}

// cie decodes the CIE at off, once.
func (s *cfiSection) cie(cies map[int]cieResult, off int) (*cie, error) {
	if r, ok := cies[off]; ok {
		return r.c, r.err
	}
	c, err := s.decodeCIE(off)
	if err != nil {
		err = &cfiError{s.name, off, "CIE", err}
	}
	cies[off] = cieResult{c, err}
	return c, err
}

// cieResult is a CIE decoded, or why it could not be.
type cieResult struct {
	c   *cie
	err error
}

func (s *cfiSection) decodeCIE(off int) (*cie, error) {
	if off < 0 || off >= len(s.data) {
		return nil, errors.New("outside the section")
	}
	b := dwarfread.Buf{Data: s.data, Pos: off}
	n, dwarf64 := b.UnitLength()
	if b.Err != nil || n > uint64(len(s.data)-b.Pos) {
		return nil, errors.New("bad length")
	}
	b.Data = s.data[:b.Pos+int(n)]
	if id := b.Offset(dwarf64); !s.isCIE(id, dwarf64) || b.Err != nil {
		return nil, errors.New("not a CIE")
	}
	c := &cie{off: off, addrSize: s.addrSize, fdeEnc: peAbsptr}
	c.version = b.U8()
	switch {
	case c.version == 1 || c.version == 3:
	case c.version == 4 && !s.eh:
	default:
		return nil, fmt.Errorf("version %d", c.version)
	}
	c.aug = string(b.Cstring())
	if strings.HasPrefix(c.aug, "eh") {
		b.Skip(8) // the old g++'s exception table pointer
	}
	if c.version >= 4 {
		c.addrSize = int(b.U8())
		if seg := b.U8(); seg != 0 {
			return nil, fmt.Errorf("segment selectors of %d bytes", seg)
		}
		if c.addrSize != 4 && c.addrSize != 8 {
			return nil, fmt.Errorf("address size %d", c.addrSize)
		}
	}
	c.codeAlign = b.Uleb()
	c.dataAlign = b.Sleb()
	if c.version == 1 {
		c.ra = int(b.U8())
	} else {
		c.ra = int(b.Uleb())
	}
	if b.Err != nil {
		return nil, b.Err
	}
	if strings.HasPrefix(c.aug, "z") {
		c.hasAugLen = true
		n := b.Uleb()
		if b.Err != nil || n > uint64(len(b.Data)-b.Pos) {
			return nil, errors.New("augmentation data runs past the entry")
		}
		end := b.Pos + int(n)
		a := dwarfread.Buf{Data: b.Data[:end], Pos: b.Pos}
		for _, ch := range c.aug[1:] {
			switch ch {
			case 'R':
				c.fdeEnc = a.U8()
			case 'L':
				a.U8() // the LSDA's encoding: FDEs' LSDAs are skipped whole
			case 'P':
				enc := a.U8()
				// The personality routine is not needed for frames; an
				// indirect one is often in a relocated .data, so its
				// value is skipped, not read.
				if _, err := s.pointer(&a, enc&^peIndirect, c.addrSize, false); err != nil {
					return nil, fmt.Errorf("personality: %w", err)
				}
			case 'S':
				c.signal = true
			case 'B', 'G':
				// AArch64's B key and MTE tagged frames: no data.
			default:
				// Unknown augmentations are skipped whole, which 'z'
				// makes possible.
				a.Pos = end
			}
		}
		if a.Err != nil {
			return nil, fmt.Errorf("augmentation data: %w", a.Err)
		}
		b.Pos = end
	} else if !strings.HasPrefix(c.aug, "eh") {
		// Without 'z' the size of unknown augmentation data is not
		// known; gas writes "S" so into .debug_frame.
		for _, ch := range c.aug {
			if ch != 'S' {
				return nil, fmt.Errorf("unknown augmentation %q", c.aug)
			}
			c.signal = true
		}
	}
	c.ins = b.Data[b.Pos:]
	if c.codeAlign == 0 {
		return nil, errors.New("code alignment factor 0")
	}
	return c, nil
}

// fde decodes the FDE at off, whose CIE id field is at idAt.
func (s *cfiSection) fde(cies map[int]cieResult, off int, b *dwarfread.Buf, idAt int, id uint64) (fde, error) {
	var cieOff int
	if s.eh {
		if id > uint64(idAt) {
			return fde{}, &cfiError{s.name, off, "FDE", fmt.Errorf("CIE pointer %#x points before the section", id)}
		}
		cieOff = idAt - int(id)
	} else {
		if id >= uint64(len(s.data)) {
			return fde{}, &cfiError{s.name, off, "FDE", fmt.Errorf("CIE pointer %#x points past the section", id)}
		}
		cieOff = int(id)
	}
	c, err := s.cie(cies, cieOff)
	if err != nil {
		return fde{}, &cfiError{s.name, off, "FDE", err}
	}
	d := fde{sec: s, cie: c, off: off}
	enc := c.fdeEnc
	if !s.eh {
		enc = peAbsptr
	}
	if d.lo, err = s.pointer(b, enc, c.addrSize, true); err != nil {
		return fde{}, &cfiError{s.name, off, "FDE", fmt.Errorf("initial location: %w", err)}
	}
	n, err := s.pointer(b, enc&0x0f, c.addrSize, false)
	if err != nil {
		return fde{}, &cfiError{s.name, off, "FDE", fmt.Errorf("address range: %w", err)}
	}
	d.hi = d.lo + n
	if d.hi < d.lo {
		return fde{}, &cfiError{s.name, off, "FDE", fmt.Errorf("address range %#x wraps", n)}
	}
	if c.hasAugLen {
		b.Skip(b.Uleb()) // the LSDA pointer
	}
	if b.Err != nil {
		return fde{}, &cfiError{s.name, off, "FDE", b.Err}
	}
	d.ins, d.insAt = b.Data[b.Pos:], b.Pos
	return d, nil
}

// cfaState is a row being built by the instructions.
type cfaState struct {
	cfa      CFARule
	regs     map[int]rule
	argsSize uint64
}

func (st *cfaState) clone() cfaState {
	c := *st
	c.regs = make(map[int]rule, len(st.regs))
	for k, v := range st.regs {
		c.regs[k] = v
	}
	return c
}

// row runs the CIE's initial instructions and the FDE's up to pc.
func (d *fde) row(pc uint64) (*Row, error) {
	st := cfaState{regs: map[int]rule{}}
	if _, _, err := d.run(d.cie.ins, &st, nil, 0, ^uint64(0), true); err != nil {
		return nil, &cfiError{d.sec.name, d.cie.off, "CIE", err}
	}
	init := st.clone()
	lo, hi, err := d.run(d.ins, &st, &init, d.lo, pc, false)
	if err != nil {
		return nil, &cfiError{d.sec.name, d.off, "FDE", err}
	}
	if hi > d.hi {
		hi = d.hi
	}
	return &Row{Lo: lo, Hi: hi, CFA: st.cfa, Regs: st.regs, RA: d.cie.ra,
		ArgsSize: st.argsSize, Signal: d.cie.signal, Source: d.sec.name}, nil
}

// Call frame instructions, DW_CFA_*.
const (
	cfaAdvanceLoc        = 0x40 // high two bits; delta in the low six
	cfaOffset            = 0x80 // register in the low six
	cfaRestore           = 0xc0 // register in the low six
	cfaNop               = 0x00
	cfaSetLoc            = 0x01
	cfaAdvanceLoc1       = 0x02
	cfaAdvanceLoc2       = 0x03
	cfaAdvanceLoc4       = 0x04
	cfaOffsetExtended    = 0x05
	cfaRestoreExtended   = 0x06
	cfaUndefined         = 0x07
	cfaSameValue         = 0x08
	cfaRegister          = 0x09
	cfaRememberState     = 0x0a
	cfaRestoreState      = 0x0b
	cfaDefCFA            = 0x0c
	cfaDefCFARegister    = 0x0d
	cfaDefCFAOffset      = 0x0e
	cfaDefCFAExpression  = 0x0f
	cfaExpression        = 0x10
	cfaOffsetExtendedSf  = 0x11
	cfaDefCFASf          = 0x12
	cfaDefCFAOffsetSf    = 0x13
	cfaValOffset         = 0x14
	cfaValOffsetSf       = 0x15
	cfaValExpression     = 0x16
	cfaMIPSAdvanceLoc8   = 0x1d
	cfaGNUWindowSave     = 0x2d
	cfaGNUArgsSize       = 0x2e
	cfaGNUNegOffsetExtnd = 0x2f
)

// run executes instructions from address loc until one moves the
// location past pc. It returns the addresses where the resulting row
// starts and where the next begins (^0 when none does). init is the
// CIE's row, for the restore instructions; cieMode rejects nothing but
// ignores location changes, which a CIE should not have.
func (d *fde) run(ins []byte, st *cfaState, init *cfaState, loc, pc uint64, cieMode bool) (lo, hi uint64, err error) {
	c := d.cie
	b := dwarfread.Buf{Data: ins}
	var stack []cfaState
	lo = loc
	hi = ^uint64(0)
	advance := func(to uint64) bool {
		if cieMode {
			return false
		}
		if to > pc {
			hi = to
			return true
		}
		loc, lo = to, to
		return false
	}
	restore := func(r int) {
		if init != nil {
			if v, ok := init.regs[r]; ok {
				st.regs[r] = v
				return
			}
		}
		delete(st.regs, r)
	}
	expr := func() (dwarfexpr.Expr, error) {
		n := b.Uleb()
		if b.Err != nil || n > uint64(len(ins)-b.Pos) {
			return nil, dwarfread.ErrTruncated
		}
		p := ins[b.Pos : b.Pos+int(n)]
		b.Pos += int(n)
		u := &dwarfread.UnitCtx{Unit: &dwarfread.Unit{AddrSize: c.addrSize, Vers: 4}}
		return dwarfread.DecodeExpr(new(dwarfread.DwarfSections), p, u)
	}
	for b.Pos < len(ins) {
		at := b.Pos
		op := b.U8()
		var stop bool
		switch op & 0xc0 {
		case cfaAdvanceLoc:
			stop = advance(loc + uint64(op&0x3f)*c.codeAlign)
		case cfaOffset:
			st.regs[int(op&0x3f)] = rule{Kind: RuleOffset, Offset: int64(b.Uleb()) * c.dataAlign}
		case cfaRestore:
			restore(int(op & 0x3f))
		default:
			switch op {
			case cfaNop:
			case cfaSetLoc:
				enc := c.fdeEnc
				if !d.sec.eh {
					enc = peAbsptr
				}
				v, err := d.sec.pointer(&b, enc, c.addrSize, true)
				if err != nil {
					return 0, 0, fmt.Errorf("DW_CFA_set_loc at byte %d: %w", at, err)
				}
				stop = advance(v)
			case cfaAdvanceLoc1:
				stop = advance(loc + uint64(b.U8())*c.codeAlign)
			case cfaAdvanceLoc2:
				stop = advance(loc + uint64(b.U16())*c.codeAlign)
			case cfaAdvanceLoc4:
				stop = advance(loc + uint64(b.U32())*c.codeAlign)
			case cfaMIPSAdvanceLoc8:
				stop = advance(loc + b.U64()*c.codeAlign)
			case cfaOffsetExtended:
				r := int(b.Uleb())
				st.regs[r] = rule{Kind: RuleOffset, Offset: int64(b.Uleb()) * c.dataAlign}
			case cfaOffsetExtendedSf:
				r := int(b.Uleb())
				st.regs[r] = rule{Kind: RuleOffset, Offset: b.Sleb() * c.dataAlign}
			case cfaGNUNegOffsetExtnd:
				r := int(b.Uleb())
				st.regs[r] = rule{Kind: RuleOffset, Offset: -int64(b.Uleb()) * c.dataAlign}
			case cfaValOffset:
				r := int(b.Uleb())
				st.regs[r] = rule{Kind: ruleValOffset, Offset: int64(b.Uleb()) * c.dataAlign}
			case cfaValOffsetSf:
				r := int(b.Uleb())
				st.regs[r] = rule{Kind: ruleValOffset, Offset: b.Sleb() * c.dataAlign}
			case cfaRestoreExtended:
				restore(int(b.Uleb()))
			case cfaUndefined:
				st.regs[int(b.Uleb())] = rule{Kind: ruleUndefined}
			case cfaSameValue:
				st.regs[int(b.Uleb())] = rule{Kind: RuleSameValue}
			case cfaRegister:
				r := int(b.Uleb())
				st.regs[r] = rule{Kind: ruleRegister, Reg: int(b.Uleb())}
			case cfaRememberState:
				stack = append(stack, st.clone())
			case cfaRestoreState:
				if len(stack) == 0 {
					return 0, 0, fmt.Errorf("DW_CFA_restore_state at byte %d with no state remembered", at)
				}
				// The args size is not part of the state (as in libgcc).
				args := st.argsSize
				*st = stack[len(stack)-1]
				st.argsSize = args
				stack = stack[:len(stack)-1]
			case cfaDefCFA:
				st.cfa = CFARule{Reg: int(b.Uleb()), Offset: int64(b.Uleb())}
			case cfaDefCFASf:
				st.cfa = CFARule{Reg: int(b.Uleb()), Offset: b.Sleb() * c.dataAlign}
			case cfaDefCFARegister:
				st.cfa.Reg, st.cfa.Expr = int(b.Uleb()), nil
			case cfaDefCFAOffset:
				st.cfa.Offset, st.cfa.Expr = int64(b.Uleb()), nil
			case cfaDefCFAOffsetSf:
				st.cfa.Offset, st.cfa.Expr = b.Sleb()*c.dataAlign, nil
			case cfaDefCFAExpression:
				e, err := expr()
				if err != nil {
					return 0, 0, fmt.Errorf("DW_CFA_def_cfa_expression at byte %d: %w", at, err)
				}
				st.cfa = CFARule{Reg: -1, Expr: e}
			case cfaExpression, cfaValExpression:
				r := int(b.Uleb())
				e, err := expr()
				if err != nil {
					return 0, 0, fmt.Errorf("DW_CFA_expression at byte %d: %w", at, err)
				}
				k := ruleExpression
				if op == cfaValExpression {
					k = ruleValExpression
				}
				st.regs[r] = rule{Kind: k, Expr: e}
			case cfaGNUArgsSize:
				st.argsSize = b.Uleb()
			case cfaGNUWindowSave:
				// SPARC's register windows and AArch64's return address
				// signing: nothing the CFA depends on.
			default:
				return 0, 0, fmt.Errorf("unknown instruction %#x at byte %d", op, at)
			}
		}
		if b.Err != nil {
			return 0, 0, fmt.Errorf("instruction at byte %d: %w", at, b.Err)
		}
		if stop {
			return lo, hi, nil
		}
	}
	return lo, hi, nil
}
