package bib

import (
	"reflect"
	"testing"
)

func TestParseNames(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want []Name
	}{
		{"Family, Given", []Name{{Family: "Family", Given: "Given"}}},
		{"Given Family", []Name{{Family: "Family", Given: "Given"}}},
		{"Given Middle Family", []Name{{Family: "Family", Given: "Given Middle"}}},
		{"Ludwig van Beethoven", []Name{{Family: "van Beethoven", Given: "Ludwig"}}},
		{"van Beethoven, Ludwig", []Name{{Family: "van Beethoven", Given: "Ludwig"}}},
		{"Jean de la Fontaine", []Name{{Family: "de la Fontaine", Given: "Jean"}}},
		{"Charles Louis Xavier Joseph de la Vall{\\'e}e Poussin", []Name{{Family: "de la Vallée Poussin", Given: "Charles Louis Xavier Joseph"}}},
		{"Ford, Jr., Henry", []Name{{Family: "Ford", Given: "Henry", Suffix: "Jr."}}},
		{"King, Martin Luther, Jr.", []Name{{Family: "King", Given: "Martin Luther", Suffix: "Jr."}}},
		{"{World Health Organization}", []Name{{Literal: "World Health Organization"}}},
		{"{Barnes and Noble}", []Name{{Literal: "Barnes and Noble"}}},
		{"{\\'E}mile Zola", []Name{{Family: "Zola", Given: "Émile"}}},
		{"Plato", []Name{{Family: "Plato"}}},
		{"Smith, John and others", []Name{{Family: "Smith", Given: "John"}}},
		{"A. Smith AND B. Jones", []Name{{Family: "Smith", Given: "A."}, {Family: "Jones", Given: "B."}}},
		{"Anderson, Alan and Sandberg, Sand", []Name{{Family: "Anderson", Given: "Alan"}, {Family: "Sandberg", Given: "Sand"}}},
		{"{Abou-Ras}, Daniel", []Name{{Family: "Abou-Ras", Given: "Daniel"}}},
		{"Gal~I.", []Name{{Family: "I.", Given: "Gal"}}},
		{"  and  , and ", nil},
	} {
		eq(t, c.in, parseNames(c.in), c.want)
	}
}

func TestNamesAsPeopleWriteThem(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string][]Name{
		"Ryszard Michalski, Jaime G. Carbonell, and Tom M. Mitchell": {{Family: "Michalski", Given: "Ryszard"}, {Family: "Carbonell", Given: "Jaime G."}, {Family: "Mitchell", Given: "Tom M."}},
		"Doe, Jr., Jeffrey":                 {{Family: "Doe", Given: "Jeffrey", Suffix: "Jr."}},
		"Jolly, III, James and Smith, Anna": {{Family: "Jolly", Given: "James", Suffix: "III"}, {Family: "Smith", Given: "Anna"}},
		"family=Gogh, given=Vincent, prefix=van, useprefix=true and given=Jean, family=Dupont, suffix=Jr., given-i=J": {
			{Family: "van Gogh", Given: "Vincent"}, {Family: "Dupont", Given: "Jean", Suffix: "Jr."}},
		"Madelung, O. and others": {{Family: "Madelung", Given: "O."}},
		"family=Hakim, given=Tawfiq, prefix=al-, useprefix=true and family=Gravesande, given=Goverdus, prefix='s-": {
			{Family: "al-Hakim", Given: "Tawfiq"}, {Family: "'s-Gravesande", Given: "Goverdus"}},
	} {
		if got := parseNames(raw); !reflect.DeepEqual(got, want) {
			t.Errorf("parseNames(%q) = %+v, want %+v", raw, got, want)
		}
	}
}

// A family name that starts with an accent command keeps its letter.
func TestNameStartingWithAnAccent(t *testing.T) {
	t.Parallel()
	eq(t, "accented family", parseNames(`Wilhelm \"{O}stberg and \'Emile Zola`), []Name{{Family: "Östberg", Given: "Wilhelm"}, {Family: "Zola", Given: "Émile"}})
}
