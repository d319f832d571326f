package pgschema

import (
	"slices"
	"testing"
)

func TestQualifier(t *testing.T) {
	tests := []struct{ schema, table, want string }{
		{"", "wopneg_run_events", `"wopneg_run_events"`},
		{"audit", "wopneg_run_events", `"audit"."wopneg_run_events"`},
		{`we"ird`, `t"x`, `"we""ird"."t""x"`},
	}
	for _, tt := range tests {
		if got := Qualifier(tt.schema)(tt.table); got != tt.want {
			t.Errorf("Qualifier(%q)(%q) = %s, want %s", tt.schema, tt.table, got, tt.want)
		}
	}
}

func TestDDL(t *testing.T) {
	if got := DDL(""); got != nil {
		t.Errorf("DDL(\"\") = %q, want nothing", got)
	}
	if got, want := DDL("audit"), []string{`CREATE SCHEMA IF NOT EXISTS "audit"`}; !slices.Equal(got, want) {
		t.Errorf("DDL(audit) = %q, want %q", got, want)
	}
}
