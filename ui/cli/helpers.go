package cli

import (
	"fmt"
	"strings"
)

// Small text helpers the commands share; the rule for untrusted text,
// clipping and counted nouns are textkit's.

// oneLineText collapses a passage to one line for listing (the passage is
// made safe where it is printed).
func oneLineText(s string) string { return strings.Join(strings.Fields(s), " ") }

// commas writes n with thousands separators.
func commas(n int) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, i := float64(n), -1
	for f >= unit && i < 4 {
		f /= unit
		i++
	}
	return fmt.Sprintf("%.1f %cB", f, "KMGTP"[i])
}

func trimFloat(f float64) string {
	s := fmt.Sprintf("%.2f", f)
	for len(s) > 1 && s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	if s[len(s)-1] == '.' {
		s = s[:len(s)-1]
	}
	return s
}

func joinNonEmpty(sep string, parts ...string) string {
	out := ""
	for _, p := range parts {
		if p == "" {
			continue
		}
		if out != "" {
			out += sep
		}
		out += p
	}
	return out
}

func joinArgs(args []string) string { return strings.TrimSpace(strings.Join(args, " ")) }
