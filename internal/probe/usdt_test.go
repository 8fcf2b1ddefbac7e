package probe

import (
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// note builds one ELF note as a .note.stapsdt section holds it.
func note(name string, typ uint32, desc []byte) []byte {
	le := binary.LittleEndian
	b := le.AppendUint32(nil, uint32(len(name)+1))
	b = le.AppendUint32(b, uint32(len(desc)))
	b = le.AppendUint32(b, typ)
	b = append(b, name...)
	b = append(b, 0)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	b = append(b, desc...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// sdtDesc builds a stapsdt note's description.
func sdtDesc(pc, base, sem uint64, strs ...string) []byte {
	le := binary.LittleEndian
	b := le.AppendUint64(nil, pc)
	b = le.AppendUint64(b, base)
	b = le.AppendUint64(b, sem)
	for _, s := range strs {
		b = append(b, s...)
		b = append(b, 0)
	}
	return b
}

func TestParseSDTNotes(t *testing.T) {
	place := note("stapsdt", 3, sdtDesc(0x401136, 0x402004, 0, "test_prov", "place", "-4@$10 -4@$4"))
	debug := note("stapsdt", 3, sdtDesc(0x401150, 0x402004, 0x404030, "bunyan", "log__debug", "8@%rdi"))
	tests := []struct {
		name    string
		data    []byte
		base    uint64
		hasBase bool
		want    []sdtNote
		wantErr bool
	}{
		{"two", append(place, debug...), 0, false, []sdtNote{
			{provider: "test_prov", name: "place", args: "-4@$10 -4@$4", pc: 0x401136, desc: 20},
			{provider: "bunyan", name: "log__debug", args: "8@%rdi", pc: 0x401150, semaphore: 0x404030, desc: 96},
		}, false},
		{"prelinked", debug, 0x502004, true, []sdtNote{
			{provider: "bunyan", name: "log__debug", args: "8@%rdi", pc: 0x501150, semaphore: 0x504030, desc: 20},
		}, false},
		{"no arguments", note("stapsdt", 3, sdtDesc(1, 0, 0, "p", "n", "")), 0, false, []sdtNote{
			{provider: "p", name: "n", pc: 1, desc: 20},
		}, false},
		{"other notes", append(note("GNU", 3, make([]byte, 20)), note("stapsdt", 1, nil)...), 0, false, nil, false},
		{"truncated header", place[:10], 0, false, nil, true},
		{"truncated description", place[:len(place)-8], 0, false, nil, true},
		{"short description", note("stapsdt", 3, make([]byte, 20)), 0, false, nil, true},
		{"no probe name", note("stapsdt", 3, sdtDesc(1, 0, 0, "p")), 0, false, nil, true},
		{"good then bad", append(append([]byte{}, place...), 1, 2, 3), 0, false, []sdtNote{
			{provider: "test_prov", name: "place", args: "-4@$10 -4@$4", pc: 0x401136, desc: 20},
		}, true},
		{"huge sizes", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 3, 0, 0, 0}, 0, false, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSDTNotes(tt.data, binary.LittleEndian, 8, tt.base, tt.hasBase)
			if (err != nil) != tt.wantErr {
				t.Errorf("error %v, want error %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(sdtNote{})); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

func FuzzParseSDTNotes(f *testing.F) {
	f.Add(note("stapsdt", 3, sdtDesc(0x401136, 0x402004, 0, "test_prov", "place", "-4@$10")))
	f.Add(note("stapsdt", 3, make([]byte, 24)))
	f.Fuzz(func(t *testing.T, data []byte) {
		notes, _ := parseSDTNotes(data, binary.LittleEndian, 8, 0x1000, true)
		for _, n := range notes {
			if n.provider == "" || n.name == "" {
				t.Fatalf("note without a provider or name: %+v", n)
			}
		}
	})
}

func TestUSDTProbeName(t *testing.T) {
	for in, want := range map[string]string{"place": "place", "log__debug": "log-debug", "a__b__c": "a-b-c", "x_y": "x_y"} {
		if got := usdtProbeName(in); got != want {
			t.Errorf("usdtProbeName(%q) = %q, want %q", in, got, want)
		}
	}
}
