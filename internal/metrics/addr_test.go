package metrics

// Addr is the address bound, its port resolved.
func (e *Endpoint) Addr() string { return e.addr }
