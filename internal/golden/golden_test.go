package golden

import "testing"

func TestFirstDiff(t *testing.T) {
	for _, tc := range []struct{ want, got, diff string }{
		{"a\nb\n", "a\nb\n", ""},
		{"a\nb\n", "a\nc\n", "line 2:\n  want: b\n  got:  c"},
		{"a\n", "a\nmore\n", "line 2:\n  want: \n  got:  more"},
	} {
		if d := FirstDiff([]byte(tc.want), []byte(tc.got)); d != tc.diff {
			t.Errorf("FirstDiff(%q, %q) = %q, want %q", tc.want, tc.got, d, tc.diff)
		}
	}
}

func TestCheck(t *testing.T) {
	Check(t, "check.golden", []byte("golden\n"))
}
