//go:build !race

package jsvm

const quickjsUnderRace = false
