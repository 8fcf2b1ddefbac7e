package consumer

import (
	"encoding/json"
	"testing"
)

// TestJSONString checks the strings the JSON output writes against
// encoding/json: they decode to what encoding/json decodes its own
// encoding to, control characters, quotes and bytes that are not UTF-8
// included.
func TestJSONString(t *testing.T) {
	for _, s := range []string{"", "plain", `q"b\s/`, "\n\t\r\x00\x1b\x7f", "é€😀", "\xff\xfe", "a\xc3", "<&>"} {
		var j jsonBuf
		j.str(s)
		var got string
		if err := json.Unmarshal(j, &got); err != nil {
			t.Errorf("%q encoded as %s: %v", s, j, err)
			continue
		}
		b, _ := json.Marshal(s)
		var want string
		json.Unmarshal(b, &want)
		if got != want {
			t.Errorf("%q: decoded %q, want %q", s, got, want)
		}
	}
}
