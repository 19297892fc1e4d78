//go:build race

package jsvm

// quickjsUnderRace: the race detector instruments QuickJS's translated C
// too, which makes loading and rendering the fixture bundles on QuickJS
// about ten times slower; those tests run without -race (scripts/test.sh).
const quickjsUnderRace = true
