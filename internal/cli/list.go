package cli

import (
	"strings"

	"github.com/livecheck/livecheck/protocol"
	"github.com/livecheck/livecheck/reports"
	"github.com/spf13/pflag"
)

// needsText says in flags what a bug needs to show ("--nodes 3 --peers all").
func needsText(b protocol.Bug) string {
	if b.NeedsDoc != "" {
		return b.NeedsDoc
	}
	var flags []string
	for _, st := range b.Needs.Settings(b.Name) {
		flags = append(flags, st.String())
	}
	return strings.Join(flags, " ")
}

func (c *command) list(args []string) int {
	fs := pflag.NewFlagSet("list", pflag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print a JSON array of {name, doc, nodes, bugs, properties, bug_needs, property_docs}")
	if code, stop := c.parse(fs, args, c.cmd+" list [--json]: the systems, one per line, with their bugs and properties"); stop {
		return code
	}
	if fs.NArg() > 0 {
		return c.usageErr("list", "takes no arguments, got %q", fs.Arg(0))
	}
	var entries []reports.ListEntry
	for _, s := range c.systems {
		e := reports.ListEntry{Name: s.Name, Doc: s.Doc, Nodes: s.NodeCount(), Bugs: s.BugNames(), Properties: []string{}, BugNeeds: map[string]string{}}
		for _, b := range s.Bugs {
			e.BugNeeds[b.Name] = needsText(b)
			e.Needs = append(e.Needs, needsText(b))
		}
		for _, p := range s.PropertyDocs() {
			e.Properties = append(e.Properties, p.Name)
			doc := p.Kind.String()
			if p.Doc != "" {
				doc += ": " + p.Doc
			}
			e.PropertyDocs = append(e.PropertyDocs, doc)
		}
		entries = append(entries, e)
	}
	if *asJSON {
		reports.WriteJSON(c.stdout, entries)
		return ExitOK
	}
	reports.WriteList(c.stdout, entries)
	return ExitOK
}
