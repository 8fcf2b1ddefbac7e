//go:build linux

package probe

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// writeKcore writes an ELF core file as /proc/kcore is: one PT_LOAD
// segment mapping data at kernel address addr.
func writeKcore(t *testing.T, path string, addr uint64, data []byte) {
	var b bytes.Buffer
	le := binary.LittleEndian
	ident := [16]byte{0x7f, 'E', 'L', 'F', 2, 1, 1}
	b.Write(ident[:])
	const ehsize, phsize = 64, 56
	binary.Write(&b, le, struct {
		Type, Machine                                     uint16
		Version                                           uint32
		Entry, Phoff, Shoff                               uint64
		Flags                                             uint32
		Ehsize, Phentsize, Phnum, Shentsize, Shnum, Shstr uint16
	}{Type: 4, Machine: 62, Version: 1, Phoff: ehsize, Ehsize: ehsize, Phentsize: phsize, Phnum: 1})
	binary.Write(&b, le, struct {
		Type, Flags                             uint32
		Off, Vaddr, Paddr, Filesz, Memsz, Align uint64
	}{Type: 1, Flags: 7, Off: ehsize + phsize, Vaddr: addr, Filesz: uint64(len(data)), Memsz: uint64(len(data)), Align: 4096})
	b.Write(data)
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLiveKinstOffsets lists a running kernel's kinst offsets from
// kallsyms and /proc/kcore, under a fake root whose kernel has no BTF.
func TestLiveKinstOffsets(t *testing.T) {
	root := t.TempDir()
	proc := filepath.Join(root, "proc")
	os.MkdirAll(proc, 0o755)
	os.WriteFile(filepath.Join(proc, "kallsyms"), []byte(
		"ffffffff81000000 T probe_me\nffffffff81000010 T next_fn\nffffffff81000020 T last_fn\n"), 0o644)
	code := []byte{
		0x55,             // push %rbp
		0x48, 0x89, 0xe5, // mov %rsp,%rbp
		0x8b, 0x07, // mov (%rdi),%eax
		0x5d,                                           // pop %rbp
		0xc3,                                           // ret
		0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, // padding to next_fn
		// next_fn, an int3 between its returns as in a live kernel's
		// text where a jump to the return thunk became ret and int3s.
		0x85, 0xff, // test %edi,%edi
		0x74, 0x02, // je +2
		0xc3,       // ret
		0xcc,       // int3
		0x31, 0xc0, // xor %eax,%eax
		0xc3, // ret
	}
	c, err := Live(Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	// No kcore: the description fails, saying why.
	_, err = c.Match(Desc{"kinst", "", "probe_me", ""})
	if err == nil || !strings.Contains(err.Error(), "cannot list the instructions of probe_me: reading its code: ") ||
		!strings.Contains(err.Error(), "CONFIG_PROC_KCORE") {
		t.Errorf("without kcore: %v", err)
	}

	writeKcore(t, filepath.Join(proc, "kcore"), 0xffffffff81000000, append(code, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc))
	c, err = Live(Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := c.Match(Desc{"kinst", "", "probe_me", ""})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, p.Name)
	}
	if diff := cmp.Diff([]string{"0", "1", "4", "6", "7"}, got); diff != "" {
		t.Errorf("kinst::probe_me: offsets (-want +got):\n%s", diff)
	}
	// The kernel refuses a kprobe on int3: +5 is no probe.
	ps, err = c.Match(Desc{"kinst", "", "next_fn", ""})
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, p := range ps {
		got = append(got, p.Name)
	}
	if diff := cmp.Diff([]string{"0", "2", "4", "6", "8"}, got); diff != "" {
		t.Errorf("kinst::next_fn: offsets (-want +got):\n%s", diff)
	}
}

// TestLiveModuleWithoutBTF lists the functions of a loaded module that
// has no BTF (an out-of-tree module) from kallsyms, beside the kernel's
// and other modules' BTF, and reads kallsyms only when such a module is
// loaded.
func TestLiveModuleWithoutBTF(t *testing.T) {
	root := t.TempDir()
	proc := filepath.Join(root, "proc")
	btfDir := filepath.Join(root, "sys/kernel/btf")
	os.MkdirAll(proc, 0o755)
	os.MkdirAll(btfDir, 0o755)
	// BTF without types: a header and the empty string.
	empty := []byte{0x9f, 0xeb, 1, 0, 24, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0}
	os.WriteFile(filepath.Join(btfDir, "vmlinux"), empty, 0o644)
	os.WriteFile(filepath.Join(btfDir, "withbtf"), empty, 0o644)
	os.WriteFile(filepath.Join(proc, "modules"), []byte(
		"withbtf 16384 0 - Live 0xffffffffc0000000\nkmod 16384 0 - Live 0xffffffffc0347000 (OE)\n"), 0o644)
	count := func() int {
		c, err := Live(Config{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		n, err := c.Count(Desc{"fbt", "", "", "entry"})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// kallsyms is missing: only reading it would fail.
	os.WriteFile(filepath.Join(proc, "modules"), []byte("withbtf 16384 0 - Live 0xffffffffc0000000\n"), 0o644)
	if n := count(); n != 0 {
		t.Errorf("without modules lacking BTF: %d fbt entry probes, want 0", n)
	}
	os.WriteFile(filepath.Join(proc, "modules"), []byte(
		"withbtf 16384 0 - Live 0xffffffffc0000000\nkmod 16384 0 - Live 0xffffffffc0347000 (OE)\n"), 0o644)
	os.WriteFile(filepath.Join(proc, "kallsyms"), []byte(
		"ffffffff81000000 T in_kernel\n"+
			"ffffffffc0000000 t in_withbtf\t[withbtf]\n"+
			"ffffffffc0347000 t kmod_one\t[kmod]\n"+
			"ffffffffc0347010 t kmod_two\t[kmod]\n"+
			"ffffffffc0349000 d kmod_data\t[kmod]\n"), 0o644)
	c, err := Live(Config{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	ps, err := c.Match(Desc{"fbt", "", "", "entry"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"fbt:kmod:kmod_one:entry", "fbt:kmod:kmod_two:entry"}, names(ps)); diff != "" {
		t.Errorf("fbt:::entry (-want +got):\n%s", diff)
	}
}
