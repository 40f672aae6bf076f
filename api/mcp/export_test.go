package mcp

// ToolOps are the tools' operations by tool name, and NotTools the
// operations that are no tool.
var ToolOps, NotTools = func() (map[string]string, map[string]string) {
	ops := map[string]string{}
	for _, t := range tools {
		ops[t.name] = t.op
	}
	return ops, notTools
}()

// Flows are the handlers' flows, as tool names.
var Flows = func() map[string][]string {
	out := map[string][]string{}
	for h, steps := range flows {
		for _, s := range steps {
			out[h] = append(out[h], s.tool)
		}
	}
	return out
}()
