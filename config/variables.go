// The table as documentation (Variables) and the RENDERER_* variables it
// does not read (UnknownVariables).

package config

import (
	"slices"
	"strings"
)

// A Variable is a row of the configuration table as documentation: the
// variable, its default and what it does, in Markdown.
type Variable struct {
	Name, Default, Doc string
}

// Variables lists every configuration variable, as docs/configuration.md does.
func Variables() []Variable {
	vars := make([]Variable, len(settings))
	for i, s := range settings {
		def := s.DefaultDoc
		if s.Default != "" {
			def = "`" + s.Default + "`"
		}
		vars[i] = Variable{Name: s.Name, Default: def, Doc: s.Doc}
	}
	return vars
}

// UnknownVariables lists the RENDERER_* variables of environ ("NAME=value"
// strings) that gorender does not read: most likely a typo, or a Node
// renderer setting gorender has no equivalent for. Either way the operator
// should know that it has no effect.
func UnknownVariables(environ []string) []string {
	var unknown []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, "RENDERER_") || name == "RENDERER_BUNDLE_PATH" ||
			slices.ContainsFunc(settings, func(s setting) bool { return s.Name == name }) {
			continue
		}
		unknown = append(unknown, name)
	}
	slices.Sort(unknown)
	return slices.Compact(unknown)
}
