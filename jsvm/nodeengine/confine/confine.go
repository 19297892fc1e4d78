// Package confine starts a Node.js executor confined: gorender's own binary,
// re-executed as a launcher (Command), bounds the process, closes the
// descriptors it must not inherit, puts itself in a Landlock domain of its
// own and installs a seccomp filter, which keep it from reaching any other
// process (gorender, the other executors) or making one, then
// executes Node.js in its place, keeping its pid. Go cannot run code
// between fork and exec, hence the launcher; it acts in this package's init
// (launch_linux.go), before the rest of gorender's packages initialize.
//
// Its imports decide how soon the launcher runs: Go initializes packages in
// import-path order as their imports allow, so a standard package that
// sorts after github.com/ and that nothing initialized early imports
// (runtime/debug was one) defers this init past ~190 others: 15-30 ms
// per process start instead of the 4-6 ms the launcher costs today.
//
// Linux only: elsewhere the node engine starts Node.js directly
// (spawn_other.go).
package confine

// launcherArg0 marks a launcher: gorender started with it as argv[0]
// confines itself and executes Node.js (never a user command: nothing else
// sets argv[0] to it).
const launcherArg0 = "gorender-node-launcher"
