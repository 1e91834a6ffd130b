package bib

import (
	"strconv"
	"strings"
)

// JabRef's groups, kept in @comment{jabref-meta: ...} as a tree: the
// path of each group, and (JabRef 2 and 3) the keys an explicit group
// lists.

// comment skips @comment{...}, keeping JabRef's group tree, which names
// the parents of the groups entries are filed in.
func (p *bibParser) comment(at int) {
	line := p.lineAt(at)
	start := p.pos + 1
	if _, ok := p.delimited(p.src[p.pos]); !ok {
		p.fail(at, line, "", "@comment is not closed")
		return
	}
	body := strings.TrimSpace(p.src[start : p.pos-1])
	for _, prefix := range []string{"jabref-meta: grouping:", "jabref-meta: groupstree:"} {
		if rest, ok := strings.CutPrefix(body, prefix); ok {
			p.jabrefGroups(rest)
		}
	}
}

// jabrefGroups reads the tree of "0 AllEntriesGroup:;" "1 StaticGroup:Name\;0\;...;"
// lines into the path of each group.
func (p *bibParser) jabrefGroups(tree string) {
	if p.groups == nil {
		p.groups = map[string]string{}
	}
	var stack []string
	// JabRef 2 and 3 wrap the tree's lines at 70 characters, anywhere
	tree = strings.NewReplacer("\r\n", "", "\n", "", "\r", "").Replace(tree)
	for _, item := range splitEscaped(tree, ';') {
		item = strings.TrimSpace(item)
		digits := 0
		for digits < len(item) && item[digits] >= '0' && item[digits] <= '9' {
			digits++
		}
		kind, rest, ok := strings.Cut(item[digits:], ":")
		if digits == 0 || digits > 3 || !ok {
			continue
		}
		level, _ := strconv.Atoi(item[:digits]) // 1 to 3 digits: always a number
		name := unescapeFile(strings.SplitN(rest, `\;`, 2)[0])
		if level > len(stack) || len(p.groups) >= maxMacros {
			continue
		}
		stack = append(stack[:level], name)
		if level > 0 && name != "" {
			path := strings.Join(stack[1:], "/")
			if _, seen := p.groups[name]; !seen {
				p.groups[name] = path
			}
			if strings.TrimSpace(kind) == "ExplicitGroup" {
				p.explicitMembers(rest, path)
			}
		}
	}
}

// explicitMembers files the keys an ExplicitGroup lists ("Name\;0\;key1\;key2\;")
// in the group at path.
func (p *bibParser) explicitMembers(def, path string) {
	if p.members == nil {
		p.members = map[string][]string{}
	}
	fields := strings.Split(def, `\;`)
	for _, k := range fields[min(2, len(fields)):] {
		if k = strings.ToLower(strings.TrimSpace(unescapeFile(k))); k != "" && len(p.members) < MaxItems && len(p.members[k]) < maxList {
			p.members[k] = append(p.members[k], path)
		}
	}
}
