// Package textkit is the project's small text rules, in one leaf that
// every other package imports directly (it imports nothing of the
// project): the one rule for untrusted text on its way to a terminal
// (StripControls, CleanText, CleanLine; ARCHITECTURE.md §6), cutting text
// to a number of runes with a mark (Clip), counted nouns (Plural) and the
// first non-empty of several strings (FirstNonEmpty).
//
// It is not called text because so many locals are.
package textkit
