package token

import "testing"

// TestLookup checks Lookup against the tokens' texts: each keyword's
// text is that keyword, and no other token's or name is one.
func TestLookup(t *testing.T) {
	n := 0
	for tok := Token(0); tok < keywordEnd+100; tok++ {
		text := tok.String()
		switch got := Lookup(text); {
		case tok.IsKeyword():
			n++
			if got != tok {
				t.Errorf("Lookup(%q) = %v, want %v", text, got, tok)
			}
		case got != IDENT:
			t.Errorf("Lookup(%q) = %v, the text of %d, want IDENT", text, got, tok)
		}
	}
	if want := int(keywordEnd - keywordBeg - 1); n != want {
		t.Errorf("%d keywords looked up, want %d", n, want)
	}
	for _, name := range []string{"", "x", "self_", "Self", "SIZEOF", "translators", "xlat", "execname", "int8_t"} {
		if got := Lookup(name); got != IDENT {
			t.Errorf("Lookup(%q) = %v, want IDENT", name, got)
		}
	}
}
