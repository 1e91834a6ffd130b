package runopts

import (
	"fmt"
	"strings"

	"golang.org/x/text/language"
	"golang.org/x/text/language/display"
)

// The report's language as the options name it: a BCP 47 tag or a
// language's name, in English or in itself.

// NormalizeLanguage reads a BCP 47 tag ("de", "pt-BR") or a language's
// name in English or in itself ("German", "Deutsch") and returns the tag,
// "" for English.
func NormalizeLanguage(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", nil
	}
	tag, err := language.Parse(s)
	if err == nil && display.English.Tags().Name(tag) == "" {
		err = fmt.Errorf("no such language") // well formed ("zz"), but nobody speaks it
	}
	if err != nil {
		var ok bool
		if tag, ok = languageByName(s); !ok {
			return "", fmt.Errorf("%w: unknown --language %q (a BCP 47 tag such as de or pt-BR, or a name such as German)", ErrBadInput, s)
		}
	}
	if base, _ := tag.Base(); base.String() == "en" {
		return "", nil
	}
	return tag.String(), nil
}

// namedLanguages are the languages matched by name.
var namedLanguages = []string{"ar", "bg", "ca", "cs", "da", "de", "el", "es", "et", "fa", "fi", "fr", "he", "hi", "hr", "hu", "id",
	"it", "ja", "ko", "lt", "lv", "ms", "nb", "nl", "no", "pl", "pt", "ro", "ru", "sk", "sl", "sr", "sv", "th", "tr", "uk", "vi", "zh", "en"}

func languageByName(s string) (language.Tag, bool) {
	for _, code := range namedLanguages {
		t := language.MustParse(code)
		if strings.EqualFold(display.English.Tags().Name(t), s) || strings.EqualFold(display.Self.Name(t), s) {
			return t, true
		}
	}
	return language.Und, false
}

// LanguageName is the tag's name in English ("German"), for prompts.
func LanguageName(tag string) string {
	t, err := language.Parse(tag)
	if err != nil {
		return tag
	}
	if n := display.English.Tags().Name(t); n != "" {
		return n
	}
	return tag
}
