package search

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/researchtui/researchtui/textkit"
)

// DefaultMaterialsProjectURL is the Materials Project API (v2) base.
const DefaultMaterialsProjectURL = "https://api.materialsproject.org"

// materialsFields are the summary fields asked for and kept as Record.Data.
var materialsFields = []string{
	"material_id", "formula_pretty", "chemsys", "nsites", "nelements", "volume", "density",
	"symmetry", "band_gap", "is_gap_direct", "is_metal", "formation_energy_per_atom",
	"energy_above_hull", "is_stable", "theoretical", "is_magnetic", "ordering",
	"total_magnetization", "bulk_modulus", "shear_modulus", "efermi",
}

type materialsSource struct {
	endpoint
	key string
}

// NewMaterialsProject returns the Materials Project source, or nil without
// an API key (MP_API_KEY). It looks up the chemical formulas (Fe2O3, GaN),
// chemical systems (Li-Fe-O) and a few common material names (graphene,
// silicon carbide) in the query; a query naming none returns nothing. Its
// records carry the properties in Data: they reach the writer as data and
// skip vector filtering.
func NewMaterialsProject(c *Client, baseURL, apiKey string) Source {
	if apiKey == "" {
		return nil
	}
	return &materialsSource{endpoint: newEndpoint(c, baseURL, DefaultMaterialsProjectURL), key: apiKey}
}

func (m *materialsSource) Name() string { return "materials" }

func (m *materialsSource) Search(ctx context.Context, query string, limit int) ([]Record, error) {
	if limit <= 0 {
		limit = 5
	}
	formulas, systems := MaterialsTerms(query)
	if len(formulas) == 0 && len(systems) == 0 {
		return nil, nil
	}
	v := url.Values{}
	if len(formulas) > 0 {
		v.Set("formula", strings.Join(formulas, ","))
	} else {
		v.Set("chemsys", strings.Join(systems, ","))
	}
	v.Set("_fields", strings.Join(materialsFields, ","))
	v.Set("_limit", strconv.Itoa(min(limit, 50)))
	v.Set("_sort_fields", "energy_above_hull")
	hdr := http.Header{"Accept": {"application/json"}, "X-API-KEY": {m.key}}
	resp, err := m.c.Get(ctx, withQuery(m.base+"/materials/summary/", v), hdr)
	if err != nil {
		var he *HTTPError
		if errors.As(err, &he) && (he.Status == 401 || he.Status == 403) {
			return nil, fmt.Errorf("materials: the API key was refused (HTTP %d); check MP_API_KEY", he.Status)
		}
		return nil, fmt.Errorf("materials: %w", err)
	}
	return parseUpTo(ParseMaterialsSummary, resp.Body, limit)
}

var (
	elementSet = func() map[string]bool {
		m := map[string]bool{}
		for _, e := range strings.Fields(`H He Li Be B C N O F Ne Na Mg Al Si P S Cl Ar K Ca Sc Ti V Cr Mn Fe Co Ni Cu Zn Ga Ge As Se Br Kr
Rb Sr Y Zr Nb Mo Tc Ru Rh Pd Ag Cd In Sn Sb Te I Xe Cs Ba La Ce Pr Nd Pm Sm Eu Gd Tb Dy Ho Er Tm Yb Lu Hf Ta W Re Os Ir Pt Au Hg
Tl Pb Bi Po At Rn Fr Ra Ac Th Pa U Np Pu Am Cm Bk Cf Es Fm Md No Lr`) {
			m[e] = true
		}
		return m
	}()
	formulaRe   = regexp.MustCompile(`^(?:[A-Z][a-z]?\d*(?:\.\d+)?)+$`)
	elementRe   = regexp.MustCompile(`([A-Z][a-z]?)(\d*(?:\.\d+)?)`)
	chemsysRe   = regexp.MustCompile(`^[A-Z][a-z]?(?:-[A-Z][a-z]?)+$`)
	commonNames = map[string]string{
		"graphene": "C", "graphite": "C", "diamond": "C", "silicon": "Si", "germanium": "Ge",
		"gallium nitride": "GaN", "gallium arsenide": "GaAs", "silicon carbide": "SiC", "titanium dioxide": "TiO2",
		"zinc oxide": "ZnO", "hematite": "Fe2O3", "magnetite": "Fe3O4", "alumina": "Al2O3", "silica": "SiO2",
		"lithium iron phosphate": "LiFePO4", "molybdenum disulfide": "MoS2", "boron nitride": "BN",
	}
)

// MaterialsTerms finds chemical formulas and chemical systems in free
// text. A formula must use real element symbols and either contain a
// digit or name at least two elements, so words like "In" or "I" are not
// taken for indium or iodine.
func MaterialsTerms(q string) (formulas, systems []string) {
	seen := map[string]bool{}
	lq := strings.ToLower(q)
	names := make([]string, 0, len(commonNames))
	for n := range commonNames {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if strings.Contains(lq, n) && !seen[commonNames[n]] {
			seen[commonNames[n]] = true
			formulas = append(formulas, commonNames[n])
		}
	}
	for _, w := range strings.FieldsFunc(q, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '-')
	}) {
		w = strings.Trim(w, ".-")
		switch {
		case chemsysRe.MatchString(w):
			ok := true
			for _, e := range strings.Split(w, "-") {
				ok = ok && elementSet[e]
			}
			if ok && !seen[w] {
				seen[w] = true
				systems = append(systems, w)
			}
		case formulaRe.MatchString(w):
			parts := elementRe.FindAllStringSubmatch(w, -1)
			ok, digits := true, false
			for _, p := range parts {
				ok = ok && elementSet[p[1]]
				digits = digits || p[2] != ""
			}
			if ok && (digits || len(parts) >= 2) && len(w) <= 30 && !seen[w] && !isAcronymWord(w) {
				seen[w] = true
				formulas = append(formulas, w)
			}
		}
	}
	return formulas, systems
}

// isAcronymWord rejects all-capital words without digits of three or more
// letters (DFT, HIV, CNN) that happen to spell element symbols.
func isAcronymWord(w string) bool {
	if len(w) < 3 {
		return false
	}
	for _, r := range w {
		if !(r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// ParseMaterialsSummary parses a /materials/summary/ answer
// ({"data":[...],"meta":{...}}) into records whose Data holds the
// properties and whose Abstract states them in words.
func ParseMaterialsSummary(body []byte) ([]Record, error) {
	var env struct {
		Data   []map[string]any `json:"data"`
		Detail any              `json:"detail"`
	}
	if err := decodeObject("materials", body, &env); err != nil {
		return nil, err
	}
	if env.Data == nil {
		if err := detailError("materials", env.Detail); err != nil {
			return nil, err
		}
	}
	var out []Record
	for _, d := range env.Data {
		id, _ := d["material_id"].(string)
		formula, _ := d["formula_pretty"].(string)
		id, formula = textkit.CleanLine(id), textkit.CleanLine(formula)
		if id == "" {
			continue
		}
		data := map[string]any{}
		for _, f := range materialsFields {
			if v, ok := d[f]; ok && v != nil {
				data[f] = cleanValue(v)
			}
		}
		r := Record{
			Source:   "materials",
			FoundBy:  []string{"materials"},
			Title:    fmt.Sprintf("%s (%s): computed properties", formula, id),
			Authors:  []string{"Materials Project"},
			Venue:    "Materials Project",
			URL:      "https://next-gen.materialsproject.org/materials/" + url.PathEscape(id),
			Data:     data,
			Abstract: MaterialsSummaryText(formula, id, data),
		}
		AssignKey(&r)
		out = append(out, r)
	}
	return out, nil
}

// cleanValue makes strings inside API data safe for a terminal.
func cleanValue(v any) any {
	switch x := v.(type) {
	case string:
		return textkit.CleanLine(x)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, vv := range x {
			m[textkit.CleanLine(k)] = cleanValue(vv)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = cleanValue(x[i])
		}
		return out
	}
	return v
}

// MaterialsSummaryText states a material's properties in one paragraph,
// the text a reader or the writer sees.
func MaterialsSummaryText(formula, id string, d map[string]any) string {
	var parts []string
	num := func(k, label, unit string) {
		if f, ok := d[k].(float64); ok {
			parts = append(parts, fmt.Sprintf("%s %s%s", label, strconv.FormatFloat(f, 'g', 4, 64), unit))
		}
	}
	if sym, ok := d["symmetry"].(map[string]any); ok {
		cs, _ := sym["crystal_system"].(string)
		sg, _ := sym["symbol"].(string)
		if cs != "" || sg != "" {
			parts = append(parts, strings.TrimSpace("crystal system "+cs+" (space group "+sg+")"))
		}
	}
	num("band_gap", "band gap", " eV")
	if b, ok := d["is_gap_direct"].(bool); ok {
		parts = append(parts, map[bool]string{true: "direct gap", false: "indirect gap"}[b])
	}
	if b, ok := d["is_metal"].(bool); ok && b {
		parts = append(parts, "metallic")
	}
	num("formation_energy_per_atom", "formation energy", " eV/atom")
	num("energy_above_hull", "energy above hull", " eV/atom")
	if b, ok := d["is_stable"].(bool); ok {
		parts = append(parts, map[bool]string{true: "thermodynamically stable", false: "not on the convex hull"}[b])
	}
	num("density", "density", " g/cm³")
	num("volume", "cell volume", " Å³")
	num("total_magnetization", "total magnetization", " μB/f.u.")
	if o, ok := d["ordering"].(string); ok && o != "" {
		parts = append(parts, "magnetic ordering "+o)
	}
	for _, k := range []string{"bulk_modulus", "shear_modulus"} {
		if m, ok := d[k].(map[string]any); ok {
			if f, ok := m["vrh"].(float64); ok {
				parts = append(parts, fmt.Sprintf("%s (VRH) %s GPa", strings.ReplaceAll(k, "_", " "), strconv.FormatFloat(f, 'g', 4, 64)))
			}
		}
	}
	if b, ok := d["theoretical"].(bool); ok {
		parts = append(parts, map[bool]string{true: "theoretical (not matched to an experimental structure)", false: "matched to an experimentally observed structure"}[b])
	}
	return fmt.Sprintf("Materials Project entry %s for %s (DFT-computed): %s.", id, formula, strings.Join(parts, "; "))
}
