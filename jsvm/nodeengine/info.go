package nodeengine

// Info implements jsvm.InfoReporter: the Node.js version the processes run,
// as Node's process.version prints it (what the Node renderer's /info
// reports), and what confines them.
func (e *Engine) Info() map[string]string {
	return map[string]string{"node_version": "v" + e.node.version, "confinement": e.confinement}
}
